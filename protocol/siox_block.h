/*
 * A batch of records in plain C arrays: what siox-daemon builds from its
 * clients' records and siox-server reads back. The codec turns a block into
 * the compressed payload of a Batch message (protobuf-c Block, columnar and
 * delta-coded, then lz4) and back. The daemon converts client timestamps to
 * its own nanosecond clock before it fills a block; the server applies the
 * clock offset of the Batch envelope.
 *
 * Ownership: a block owns every array and string it points to once filled by
 * siox_block_decode() or the siox_block_add_* helpers; siox_block_reset()
 * empties it for reuse and siox_block_free() releases everything.
 */
#ifndef SIOX_BLOCK_H
#define SIOX_BLOCK_H

#include <stddef.h>
#include <stdint.h>

/* A typed value (an attribute or a descriptor). vtype: enum siox_value_type.
 * For SIOX_VT_STR/BYTES, bytes/len hold the value (not NUL-terminated; the
 * block keeps a terminating NUL after it for convenience). */
struct siox_value {
  uint32_t attr;
  uint32_t vtype;
  union {
    uint64_t u64;
    int64_t i64;
    double f64;
  } v;
  uint32_t len;
  char *bytes;
};

struct siox_block_process {
  uint32_t pid, uid;
  uint64_t nonce;
  char *host, *exe, *args, *job;
};

struct siox_block_node {
  uint32_t proc, unid;
  char *hwid, *swid, *iid; /* iid: "" when none */
};

struct siox_block_edge {
  uint32_t proc, from, to;
};

struct siox_block_type {
  uint32_t proc, type_id, unid;
  char *name;
};

struct siox_block_target {
  uint32_t proc, target_id;
  char *hwid, *swid; /* "": any */
};

struct siox_block_node_attr {
  uint32_t proc, unid;
  struct siox_value value;
};

struct siox_block_string_attr {
  uint32_t proc;
  uint64_t aid;
  struct siox_value value;
};

struct siox_block_descriptor {
  uint32_t proc, kind; /* enum siox_cw_desc_kind */
  uint64_t aid;
  uint32_t node; /* unid, or target id for SEND */
  uint64_t offset, length;
  uint32_t nvalues; /* 1, or 2 for MAP */
  struct siox_value values[2];
};

/* Loss accounting of one process (siox.proto, message Stats): client
 * counters are cumulative, daemon_* are deltas since the previous block. */
struct siox_block_stats {
  uint32_t proc;
  uint64_t activities, records, dropped;
  uint64_t dropped_exit;
  uint64_t daemon_dropped_spool, daemon_dropped_invalid;
};

struct siox_block_activity {
  uint32_t proc, type_id;
  uint64_t aid, parent; /* parent 0: root */
  int64_t start_ns, end_ns;
  int32_t err;
  uint32_t attr_first, nattr; /* slice of siox_block.attrs */
};

#define SIOX_BLOCK_ARRAY(T, name) \
  T *name;                        \
  size_t n_##name, cap_##name

struct siox_block {
  SIOX_BLOCK_ARRAY(struct siox_block_process, processes);
  SIOX_BLOCK_ARRAY(struct siox_block_node, nodes);
  SIOX_BLOCK_ARRAY(struct siox_block_edge, edges);
  SIOX_BLOCK_ARRAY(struct siox_block_type, types);
  SIOX_BLOCK_ARRAY(struct siox_block_target, targets);
  SIOX_BLOCK_ARRAY(struct siox_block_node_attr, node_attrs);
  SIOX_BLOCK_ARRAY(struct siox_block_string_attr, string_attrs);
  SIOX_BLOCK_ARRAY(struct siox_block_descriptor, descriptors);
  SIOX_BLOCK_ARRAY(struct siox_block_stats, stats);
  SIOX_BLOCK_ARRAY(struct siox_block_activity, activities);
  SIOX_BLOCK_ARRAY(struct siox_value, attrs); /* numeric activity attributes */
  /* Chunked arena holding every string of the block (private to block.c). */
  struct siox_block_chunk *arena_head, *arena_cur;
};

/* Longest string or bytes value a block carries. The client wire never
 * produces more (its lengths are 16-bit), so anything longer is corrupt. */
#define SIOX_BLOCK_MAX_STR 65535u

void siox_block_init(struct siox_block *b);
void siox_block_reset(struct siox_block *b); /* keeps capacity */
void siox_block_free(struct siox_block *b);

/* Builders. Each returns a zeroed slot at the end of its array, or NULL on
 * ENOMEM (the block is unchanged then). A returned pointer stays valid until
 * the next add to the same array or a reset. Arrays grow geometrically, so a
 * reused block stops allocating once it has seen its largest batch. */
struct siox_block_process *siox_block_add_process(struct siox_block *b);
struct siox_block_node *siox_block_add_node(struct siox_block *b);
struct siox_block_edge *siox_block_add_edge(struct siox_block *b);
struct siox_block_type *siox_block_add_type(struct siox_block *b);
struct siox_block_target *siox_block_add_target(struct siox_block *b);
struct siox_block_node_attr *siox_block_add_node_attr(struct siox_block *b);
struct siox_block_string_attr *siox_block_add_string_attr(struct siox_block *b);
struct siox_block_descriptor *siox_block_add_descriptor(struct siox_block *b);
struct siox_block_stats *siox_block_add_stats(struct siox_block *b);
struct siox_block_activity *siox_block_add_activity(struct siox_block *b);

/* Appends n zeroed numeric attribute slots for activity a (which must be in
 * b) and sets a->attr_first / a->nattr to them. Returns the first slot (non
 * NULL even for n == 0), or NULL on ENOMEM (a unchanged). Fill attr, vtype
 * (U64, I64 or F64) and v. */
struct siox_value *siox_block_add_attrs(struct siox_block *b, struct siox_block_activity *a, uint32_t n);

/* Copies len bytes of s (may hold NULs; s may be NULL when len is 0) into
 * block-owned memory and appends a NUL. Returns the copy, or NULL on ENOMEM.
 * No malloc per string: the block's arena is reused after a reset. */
char *siox_block_strdup(struct siox_block *b, const char *s, size_t len);
/* The arena's position (arena_cur and this), and a return to it: what was
 * allocated since is given back (siox-daemon takes back a refused frame). */
size_t siox_block_arena_used(const struct siox_block *b);
void siox_block_arena_rewind(struct siox_block *b, struct siox_block_chunk *cur, size_t used);

/* Sets v's bytes/len to a block-owned copy of (p, len). Returns 0 or -ENOMEM. */
int siox_block_set_bytes(struct siox_block *b, struct siox_value *v, const void *p, size_t len);

/* Encodes b into a freshly malloc'd lz4 payload (*out, *out_len; caller
 * frees) and reports the uncompressed protobuf size in *raw_len.
 * Returns 0 or -ENOMEM / -EOVERFLOW (block larger than SIOX_FRAME_MAX_PAYLOAD)
 * / -EINVAL (b holds something the decoder would reject: a proc index out of
 * range, an attr slice outside attrs, a bad vtype or descriptor kind, a string
 * longer than SIOX_BLOCK_MAX_STR). NULL strings are sent as "". Activity
 * order is kept. An activity that names itself as parent travels as a root
 * (parent_back aid - parent == 0 means root on the wire). */
int siox_block_encode(const struct siox_block *b, uint8_t **out, size_t *out_len, size_t *raw_len);

/* An encoder keeps the buffers of siox_block_encode from one block to the
 * next (the scratch of the protobuf-c structs, the packed bytes, the lz4
 * output), so a warm encode allocates nothing but the payload it returns.
 * Its memory stays at what the largest block encoded needed. create returns
 * NULL on ENOMEM; destroy frees it (NULL is fine). siox_block_encode_with is siox_block_encode with
 * e's buffers and gives the same bytes; one encoder serves one thread. */
struct siox_block_encoder;
struct siox_block_encoder *siox_block_encoder_create(void);
void siox_block_encoder_destroy(struct siox_block_encoder *e);
int siox_block_encode_with(struct siox_block_encoder *e, const struct siox_block *b, uint8_t **out,
                           size_t *out_len, size_t *raw_len);

/* Decodes an lz4 payload of raw_len uncompressed bytes into b (which must be
 * initialised; it is reset first). Every index (proc, attr slices) is checked.
 * Returns 0, or -EBADMSG with *why (static string) naming what was wrong, or
 * -ENOMEM. On error b is left empty. STR vs BYTES of a decoded value comes
 * from the ontology (the wire has one bytes case); unknown ids get BYTES. */
int siox_block_decode(const uint8_t *in, size_t in_len, size_t raw_len, struct siox_block *b, const char **why);

/* siox_block_decode under an absolute memory bound: the lz4 output
 * (raw_len) plus protobuf-c's allocations stay within max_mem / 2 ... max_mem
 * (raw_len must be below max_mem / 2; the unpack gets at most half of the
 * rest, the other half is left for the converted block). A payload that needs
 * more is refused with -EBADMSG ("... decode memory budget") before it can
 * grow: a 263 KB lz4 bomb declaring 64 MiB of empty messages costs max_mem,
 * not gigabytes. siox_block_decode is this with no absolute bound. */
int siox_block_decode_limited(const uint8_t *in, size_t in_len, size_t raw_len, size_t max_mem, struct siox_block *b,
                              const char **why);

#endif
