/*
 * The client -> daemon wire: what libsiox-client writes to the node daemon's
 * unix socket. Both ends run on one host, so integers are in host byte order
 * and records are the very bytes the hot path wrote into its per-thread
 * buffer. The daemon trusts none of it: every length is checked against the
 * frame (see siox-daemon), and identity comes from SO_PEERCRED.
 *
 * Stream: frame header, then `length` payload bytes, repeated.
 */
#ifndef SIOX_CLIENT_WIRE_H
#define SIOX_CLIENT_WIRE_H

#include <stdint.h>

#define SIOX_CW_MAGIC 0x31435853u /* "SXC1" little-endian */
#define SIOX_CW_VERSION 1u
#define SIOX_CW_MAX_PAYLOAD (16u << 20) /* larger frames are rejected */
#define SIOX_CW_MAX_STR 255u            /* node names, type names */
#define SIOX_CW_MAX_VALUE 4096u         /* string attribute values, paths */
#define SIOX_CW_MAX_DESC_BYTES 64u      /* bytes-typed descriptors (gfid) */
#define SIOX_CW_MAX_ATTRS 8u            /* numeric attributes per activity */

enum siox_cw_frame_type {
  SIOX_CW_HELLO = 1, /* first frame of a connection */
  SIOX_CW_BATCH = 2, /* records of one thread buffer */
  SIOX_CW_STATS = 3, /* process counters, sent with every flush */
  /* First frame of a status query (`siox status`), empty payload. The daemon
   * answers with one frame of this type whose payload is a protobuf-c
   * siox.StatusReply (protocol/siox.proto), then closes. */
  SIOX_CW_STATUS = 4,
  /* First frame of a hint query (MPI-IO wrapper at MPI_File_open): payload
   * struct siox_cw_hint_query + strings. The daemon answers with one frame
   * of this type whose payload is struct siox_cw_hint_reply + n hints, then
   * closes. The client gives up after its own timeout. */
  SIOX_CW_HINTS = 5,
  /* Daemon -> client on a HELLO connection: struct siox_cw_ack. The only
   * frame a daemon sends on such a connection; a client that predates it
   * reads and ignores what the daemon sends. */
  SIOX_CW_ACK = 6,
};

struct siox_cw_frame_hdr {
  uint32_t magic;
  uint16_t version;
  uint16_t type;   /* enum siox_cw_frame_type */
  uint32_t length; /* payload bytes after this header */
  /* BATCH of a client thread (siox_cw_batch.thread != 0): the frame's number
   * in its process incarnation (HELLO's nonce), 1, 2, 3... in stream order,
   * the same when the frame is sent again after a reconnect (or spilled to
   * a loss file); after 2^32 - 1 it wraps to 1. 0 on every other frame, and
   * from clients that predate it (the field was reserved, ignored by older
   * daemons): the daemon then cannot tell a resent copy from a new frame.
   * The daemon drops a frame whose seq it has already taken from that
   * nonce (siox-daemon/frameseq.c). */
  uint32_t seq;
};

/* Clock flag: when set, record timestamps are TSC ticks to be converted with
 * the (tsc, ns) pairs of HELLO and BATCH; when clear they are already ns. */
#define SIOX_CW_CLOCK_TSC 1u

/* HELLO payload: this struct then exe_len + args_len + job_len bytes (no NULs). */
struct siox_cw_hello {
  uint64_t nonce;    /* random per process incarnation (new after fork) */
  uint64_t tsc0;     /* clock pair taken at initialisation */
  int64_t ns0;
  uint32_t clock_flags;
  uint16_t exe_len;  /* executable path */
  uint16_t args_len; /* command line, args separated by ' ' (for app identity) */
  uint16_t job_len;  /* job id, may be 0 */
  uint16_t pad[3];
};

/* BATCH payload: this struct then `bytes` bytes of records. The clock pair was
 * taken after every record in the batch was written, so conversion only ever
 * interpolates between HELLO's pair and this one. */
struct siox_cw_batch {
  uint64_t tsc_ref;
  int64_t ns_ref;
  uint32_t thread; /* buffer (thread) index in the process */
  uint32_t bytes;  /* multiple of 8 */
};

/* STATS payload: the process's cumulative loss accounting. A daemon also
 * accepts the first three fields alone (24 bytes, the original STATS). */
struct siox_cw_stats {
  uint64_t activities;   /* activities made */
  uint64_t records;      /* records written to the rings */
  uint64_t dropped;      /* dropped in the client: ring full, bad call, ... */
  uint64_t dropped_exit; /* activities still held at exit that no daemon
                            acknowledged (counted, then reported) */
};
#define SIOX_CW_STATS_V1_LEN 24u

/* ACK payload (daemon -> client). `consumed` counts the bytes of this
 * connection's stream, from the first byte of HELLO, that the daemon has
 * taken: journaled (so they survive a kill -9 of the daemon), discarded and
 * counted, or refused. Cumulative; sent after each read the daemon handled. */
struct siox_cw_ack {
  uint64_t consumed;
};

/* HINTS query payload: this struct then exe, args, path, component bytes
 * (no NULs). args as in HELLO; path absolute. */
struct siox_cw_hint_query {
  uint16_t exe_len, args_len, path_len, comp_len;
};

/* Why a hint reply holds what it holds. The client adds its own reasons
 * (timeout, no daemon) after the daemon's. */
enum siox_cw_hint_status {
  SIOX_HINTS_NONE = 0,        /* the knowledge base has no set for this */
  SIOX_HINTS_FOUND = 1,       /* n hints of set hint_set_id follow */
  SIOX_HINTS_SERVER_DOWN = 2, /* the daemon could not ask the server */
  SIOX_HINTS_DISABLED = 3,    /* the daemon serves no hints (--hints off) */
  SIOX_HINTS_ERROR = 4,       /* the server's lookup failed */
  SIOX_HINTS_TIMEOUT = 5,     /* client side: no answer in time */
  SIOX_HINTS_NO_DAEMON = 6,   /* client side: no daemon at the socket */
};

#define SIOX_CW_MAX_HINTS 32u
#define SIOX_CW_HINT_KEY 64u    /* bytes, NUL included */
#define SIOX_CW_HINT_VALUE 128u /* bytes, NUL included */

/* One hint: NUL-terminated key and value. */
struct siox_cw_hint {
  char key[SIOX_CW_HINT_KEY];
  char value[SIOX_CW_HINT_VALUE];
};

/* HINTS reply payload: this struct then n struct siox_cw_hint. */
struct siox_cw_hint_reply {
  int64_t hint_set_id; /* 0 unless FOUND */
  uint32_t status;     /* enum siox_cw_hint_status */
  uint32_t n;          /* <= SIOX_CW_MAX_HINTS */
  char component[32];  /* what the keys are meant for, NUL-terminated */
};

/* ---------------------------------------------------------------------------
 * Records. Each starts with this header and is `words` * 8 bytes long in all
 * (header included); strings follow the fixed part unterminated, padded with
 * zeros to the next 8-byte boundary.
 * ------------------------------------------------------------------------- */
enum siox_cw_rec_type {
  SIOX_REC_NODE = 1,      /* a = unid;      siox_cw_node + hwid, swid, iid */
  SIOX_REC_EDGE = 2,      /* a = from unid; siox_cw_edge */
  SIOX_REC_NODE_ATTR = 3, /* a = unid;      siox_cw_attr (+ string) */
  SIOX_REC_TYPE = 4,      /* a = type id;   siox_cw_type + name */
  SIOX_REC_TARGET = 5,    /* a = target id; siox_cw_target + hwid, swid */
  SIOX_REC_ACTIVITY = 6,  /* a = type id;   siox_cw_activity + nattr siox_cw_attr */
  SIOX_REC_ATTR_STR = 7,  /* a = attr id;   siox_cw_attr_str + value */
  SIOX_REC_DESC = 8,      /* a = siox_cw_desc_kind; siox_cw_desc + values */
};

struct siox_cw_rec_hdr {
  uint16_t type;  /* enum siox_cw_rec_type */
  uint16_t words; /* total length in 8-byte words, >= 1 */
  uint32_t a;     /* per-type argument, see above */
};

struct siox_cw_node {
  uint16_t hwid_len, swid_len, iid_len, pad;
};

struct siox_cw_edge {
  uint32_t to;
  uint32_t pad;
};

struct siox_cw_type {
  uint32_t unid;
  uint32_t name_len;
};

struct siox_cw_target {
  uint16_t hwid_len, swid_len; /* 0: any */
  uint32_t pad;
};

/* A numeric attribute value; vtype is enum siox_value_type (U64, I64, F64).
 * In SIOX_REC_NODE_ATTR with a STR vtype, v is the string length and the
 * string follows. */
struct siox_cw_attr {
  uint32_t attr;
  uint32_t vtype;
  union {
    uint64_t u64;
    int64_t i64;
    double f64;
  } v;
};

struct siox_cw_activity {
  uint64_t aid;
  uint64_t parent; /* 0: a root */
  uint64_t t_start;
  uint64_t t_end;
  int32_t err;
  uint32_t nattr; /* <= SIOX_CW_MAX_ATTRS */
  /* struct siox_cw_attr attrs[nattr]; */
};

struct siox_cw_attr_str {
  uint64_t aid;
  uint32_t len;
  uint32_t pad;
};

enum siox_cw_desc_kind {
  SIOX_DESC_CREATE = 1,
  SIOX_DESC_MAP = 2,
  SIOX_DESC_RELEASE = 3,
  SIOX_DESC_SEND = 4,
  SIOX_DESC_RECEIVE = 5,
};

/* One descriptor value: integers in `value`, strings/bytes follow (len bytes). */
struct siox_cw_desc_value {
  uint32_t type; /* ontology attribute id with a scope */
  uint32_t len;  /* 0 for integer types */
  uint64_t value;
};

struct siox_cw_desc {
  uint64_t aid;   /* may be 0 for CREATE/MAP/RELEASE */
  uint32_t node;  /* unid (CREATE/MAP/RELEASE) or target id (SEND), 0 otherwise */
  uint32_t ndesc; /* 1, or 2 for MAP (from, to) */
  uint64_t offset;
  uint64_t length;
  /* ndesc x (struct siox_cw_desc_value + padded bytes) */
};

#endif
