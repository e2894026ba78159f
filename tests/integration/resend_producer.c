/*
 * Long activities whose records cross frames, for the resent-frame test
 * (test_resend_frames.sh): `resend_producer ROUNDS STEPS` makes ROUNDS
 * activities; while each runs it writes STEPS times a text attribute, a
 * remote call (SEND) and a descriptor MAP, each step flushed on its own, so
 * that most BATCH frames hold records of a running activity and no activity
 * record (the activity record comes with the stop, in a frame of its own).
 * `resend_producer ROUNDS STEPS FLUSH_MS` waits at most FLUSH_MS for each
 * flush (default 15000: for a daemon being restarted; short: the process
 * goes on, and exits, while no daemon runs). Every value is distinct, so a stored copy cannot pass for a repeat. Prints
 * what it made: "activities A text T sends S maps M made X dropped D
 * dropped_exit E".
 */
#include <stdio.h>
#include <stdlib.h>

#include <siox/siox.h>
#include <siox/siox_ontology.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: resend_producer ROUNDS STEPS [FLUSH_MS]\n");
    return 2;
  }
  unsigned rounds = (unsigned)strtoul(argv[1], NULL, 10), steps = (unsigned)strtoul(argv[2], NULL, 10);
  unsigned flush_ms = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 15000;
  siox_unid node;
  siox_type_id type;
  siox_target_id peer;
  if (siox_node_register("resend-host", "resend-producer", "0", &node) < 0 ||
      siox_activity_type_register(node, "long", &type) < 0 || siox_target_register("resend-peer", "svc", &peer) < 0) {
    fprintf(stderr, "resend_producer: registration failed\n");
    return 1;
  }
  unsigned long text = 0, sends = 0, maps = 0;
  for (unsigned r = 0; r < rounds; r++) {
    siox_aid a = siox_activity_start(type);
    for (unsigned s = 0; s < steps; s++) {
      char v[64], from[64], to[64];
      snprintf(v, sizeof v, "round %u step %u", r, s);
      snprintf(from, sizeof from, "obj-%u-%u", r, s);
      snprintf(to, sizeof to, "alias-%u-%u", r, s);
      siox_activity_attr_str(a, SIOX_ATTR_POSIX_PATH, v);
      text++;
      siox_desc d = siox_desc_str(SIOX_ATTR_TEST_HANDLE, from), t = siox_desc_str(SIOX_ATTR_TEST_HANDLE, to);
      sends += siox_descriptor_send(a, peer, &d, (uint64_t)s * 4096, 4096) == 0;
      maps += siox_descriptor_map(node, a, &d, &t) == 0;
      siox_flush(flush_ms); /* a frame of this step's records alone */
    }
    siox_activity_stop(a);
    siox_flush(flush_ms);
  }
  siox_finalize();
  struct siox_stats st;
  siox_stats_get(&st);
  printf("activities %u text %lu sends %lu maps %lu made %llu dropped %llu dropped_exit %llu\n", rounds, text, sends,
         maps, (unsigned long long)st.activities, (unsigned long long)st.dropped,
         (unsigned long long)st.dropped_exit);
  return 0;
}
