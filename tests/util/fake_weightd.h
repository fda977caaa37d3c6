/*
 * fake_weightd.h — an in-process fake weightd for the client tests (nng rep0
 * speaking proto/weights.proto on tcp://127.0.0.1, one thread) serving one
 * 4-tensor shard of tu_fill() bytes in CHUNK_BYTES chunks, with faults:
 * corrupt or drop replies, forget the shard ("restart"), answer WT_ECORRUPT
 * (a chunk damaged on the server's disk), drop a Hello, go down and come back
 * on the same port. Test code only (cmocka asserts).
 */
#ifndef WT_TESTS_FAKE_WEIGHTD_H
#define WT_TESTS_FAKE_WEIGHTD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <nng/nng.h>

#include "weights/client.h"
#include "weights/dtype.h"
#include "weights/engine.h"

#define FAKE_SEED        0x5eed1234u
#define FAKE_CHUNK_BYTES 1024u
#define FAKE_N_T         4

/* the fake shard: tensors in name order; b.bias is empty (no chunk) */
typedef struct fake_tensor_def {
	const char *name;
	wt_dtype dt;
	int64_t n; /* elements, one dim */
} fake_tensor_def;
extern const fake_tensor_def fake_shard_def[FAKE_N_T];

/* Fault fields are set by the test before the client acts (or read after). */
typedef struct fake {
	nng_socket sock;          /* open from fake_start to fake_stop; down/up never close it */
	struct tcp_proxy *proxy;  /* clients connect to it (url); down/up is its job */
	pthread_mutex_t pipes_lk; /* guards live[], n_live */
	nng_pipe live[64];        /* connections open now on the fake's side */
	int n_live, down;         /* down: requests still received are dropped */
	pthread_t th;
	int running;
	char url[64];
	uint8_t *data[FAKE_N_T];
	uint64_t nbytes[FAKE_N_T];
	int bad_tensor_hash; /* manifest lists a wrong hash for c.weight */
	int revision;        /* manifest revision "rev<N>"; starts at 1 */
	/* faults, counted over chunk requests (0-based); atomic: tests change
	 * them while the fake still serves what a failed fetch left in flight */
	_Atomic int corrupt_req;   /* corrupt the reply to this request; -1 none */
	_Atomic int corrupt_chunk; /* corrupt every reply for this global chunk index; -1 none */
	_Atomic int drop_req;      /* do not answer this request; -1 none */
	int forget_after;          /* after this many replies, ENOTFOUND until a manifest request */
	_Atomic int ecorrupt_req;  /* answer it WT_ECORRUPT, forget the shard; -1 none */
	_Atomic int ecorrupt_chunk; /* the same for every request of this global chunk; -1 none */
	int change_on_manifest;     /* the next manifest asked while forgotten lists new bytes */
	int drop_hello;             /* do not answer the Hello with this number (1-based); 0 none */
	_Atomic int chunk_delay_ms; /* sleep before each chunk reply (set while it serves) */
	int stall_after_hellos;     /* once this many Hellos came, nothing is answered (a stopped
	                               process: connections stay up); 0 none */
	_Atomic int stall_after_chunks; /* the same once this many chunk requests came; 0 none */
	/* error replies (set from any thread): manifests answered with this code
	 * while non-zero; admin requests answered with answer_admin (0: the fake
	 * has none, WT_EUNSUPPORTED). Counted in manifests / admins. */
	atomic_int answer_manifest, answer_admin, admins;
	/* Watch replies: revision watch_revision (NULL: Watch is WT_EUNSUPPORTED)
	 * and changed = watch_changed, whatever was asked (a lying server). */
	const char *watch_revision;
	int watch_changed;
	int forgotten;
	int chunk_reqs, manifests, stop;
	atomic_int hellos; /* Hellos received (read by tests while the fake runs) */
	/* connections seen (nng pipe ids): those that said Hello, those asking chunks */
	uint32_t hello_pipes[32], chunk_pipes[32];
	int n_hello_pipes, n_chunk_pipes;
	pthread_t restarter; /* fake_restart_async */
	int down_ms, restart_after;
} fake;

fake *fake_start(void);
void fake_stop(fake *f);
/* Close the listener and every connection (a killed daemon: connections are
 * refused until fake_up). The clients connect through a TCP relay
 * (tests/util/tcp_proxy.h) that does this; the nng socket stays open: nng 1.5's
 * own close paths with traffic in flight can hang or leave a pipe half open
 * (nng issues 1813, 2208), which made the restart tests flaky. */
void fake_down(fake *f);
/* Listen again on the same URL; the shard is forgotten (a restarted daemon). */
void fake_up(fake *f);
/* fake_down now, fake_up after down_ms, on a thread; join with fake_restart_join. */
void fake_restart_async(fake *f, int down_ms, int after_chunk_reqs);
void fake_restart_join(fake *f);

/* A URL nobody listens on: tcp on a port just bound and released, or (k > 0)
 * an ipc path that does not exist, different for every k. */
void fake_dead_url(char *buf, size_t n, int k);

/* A TCP listener that accepts connections (the kernel completes them) and
 * never answers: a hung or foreign server. Returns the fd; *url gets its URL. */
int fake_silent_listen(char *url, size_t n);

/* The fake shard's manifest (model "fake", default layout) through client c;
 * fails the test on an error. */
wt_manifest *fake_manifest(wt_client *c);
/* Assert that h holds exactly the fake shard's tensors, byte for byte. */
void fake_check_sink(const fake *f, const wt_host_sink *h);
/* Fetch m with c into a fresh host sink (stats into *st): on success
 * fake_check_sink, on failure assert that the sink shows no tensor (nothing
 * unverified). Returns the fetch's result (its message in err). */
int fake_fetch(const fake *f, wt_client *c, const wt_manifest *m, wt_fetch_stats *st,
               wt_errbuf *err);

#endif
