/*
 * test_store_race.c — what is read is what was checked: race-free opens of
 * the file:// store (symlink swaps), Hugging Face cache snapshot links, pins
 * that survive a rename over the name and catch an in-place write, and a
 * checkpoint whose source changes while it is open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED 5151u

/* ---- symlink swap while reading ---- */

typedef struct swapper {
	const char *dir;    /* store root */
	const char *secret; /* absolute path of a file outside the root */
	_Atomic bool stop;
	_Atomic uint64_t swaps;
} swapper;

/* Flip dir/f.bin between a regular file and a symlink to the secret, each
 * step an atomic rename over the name. */
static void *swap_loop(void *arg)
{
	swapper *w = arg;
	char *name = tu_path(w->dir, "f.bin");
	char *file = tu_path(w->dir, "f.file");
	char *link = tu_path(w->dir, "f.link");
	while (!atomic_load(&w->stop)) {
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			if (write(fd, "public", 6) != 6)
				break;
			close(fd);
		}
		if (rename(file, name) != 0)
			break;
		unlink(link);
		if (symlink(w->secret, link) != 0 || rename(link, name) != 0)
			break;
		atomic_fetch_add(&w->swaps, 1);
	}
	free(name);
	free(file);
	free(link);
	return NULL;
}

/* While f.bin flips between a file and a symlink out of the root, reads and
 * stats get the file's bytes or an error, never the secret's. (The old
 * check-then-open code leaked the secret within a few thousand reads.) */
static void test_symlink_swap(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("race");
	char *out = tu_mkdtemp("race-out");
	assert_int_equal(tu_write_file(out, "secret", "s3cr3t", 6), 0);
	assert_int_equal(tu_write_file(dir, "f.bin", "public", 6), 0);
	char *secret = tu_path(out, "secret");
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	swapper w = {.dir = dir, .secret = secret};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, swap_loop, &w), 0);
	uint64_t reads = 0, ok = 0, leaks = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char buf[6];
		int rv = store_read(s, "f.bin", 0, buf, sizeof(buf), &err);
		reads++;
		if (rv == WT_OK) {
			ok++;
			if (memcmp(buf, "s3cr3t", 6) == 0)
				leaks++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double sec =
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (leaks > 0 || sec > 3.0 || reads >= 200000)
			break;
	}
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	printf("symlink swap: %llu reads (%llu ok), %llu swaps, %llu leaks\n",
	       (unsigned long long)reads, (unsigned long long)ok,
	       (unsigned long long)atomic_load(&w.swaps), (unsigned long long)leaks);
	assert_int_equal(leaks, 0);
	assert_true(ok > 0); /* the file itself stays readable */
	store_close(s);
	free(secret);
	tu_rmrf(dir);
	tu_rmrf(out);
	free(dir);
	free(out);
}

/* ---- Hugging Face cache snapshots ---- */

static void test_hf_snapshot(void **state)
{
	(void)state;
	char *hub = tu_mkdtemp("hub");
	char *m = tu_path(hub, "models--org--name");
	char *snap = tu_path(m, "snapshots/0123abcd");
	assert_int_equal(tu_write_file(m, "blobs/aaa", "config-bytes", 12), 0);
	assert_int_equal(tu_write_file(m, "blobs/bbb", "tensor-bytes", 12), 0);
	assert_int_equal(tu_write_file(hub, "models--other--x/blobs/ccc", "theirs", 6), 0);
	assert_int_equal(tu_write_file(hub, "outside.txt", "nope!!", 6), 0);
	assert_int_equal(tu_write_file(snap, "placeholder", "", 0), 0);
	char *p;
	struct {
		const char *name, *target;
	} links[] = {
	    {"config.json", "../../blobs/aaa"},
	    {"model.safetensors", "../../blobs/bbb"},
	    {"sub/deeper.bin", "../../../blobs/bbb"},
	    {"other.bin", "../../../models--other--x/blobs/ccc"},
	    {"up.bin", "../../../outside.txt"},
	};
	char *sub = tu_path(snap, "sub");
	assert_int_equal(mkdir(sub, 0755), 0);
	free(sub);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		p = tu_path(snap, links[i].name);
		assert_int_equal(symlink(links[i].target, p), 0);
		free(p);
	}
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, snap, &err), WT_OK);
	char buf[12];
	/* links into the same models--* folder work, also from a subfolder */
	assert_int_equal(store_read(s, "config.json", 0, buf, 12, &err), WT_OK);
	assert_memory_equal(buf, "config-bytes", 12);
	assert_int_equal(store_read(s, "sub/deeper.bin", 0, buf, 12, &err), WT_OK);
	assert_memory_equal(buf, "tensor-bytes", 12);
	store_pin *pin;
	assert_int_equal(store_pin_open(s, "model.safetensors", &pin, &err), WT_OK);
	assert_int_equal(store_pin_obj(pin)->nbytes, 12);
	store_pin_close(pin);
	/* another model's folder and the hub above are outside */
	assert_int_equal(store_read(s, "other.bin", 0, buf, 6, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "outside the store root"));
	assert_int_equal(store_read(s, "up.bin", 0, buf, 6, &err), WT_EPERM);
	store_obj o;
	assert_int_equal(store_stat(s, "up.bin", &o, &err), WT_EPERM);
	store_close(s);
	/* a plain folder (no models--* above it) keeps links inside itself */
	char *plain = tu_path(hub, "plain");
	assert_int_equal(tu_write_file(plain, "a/real.bin", "x", 1), 0);
	char *pl = tu_path(plain, "a/link.bin");
	assert_int_equal(symlink("../../outside.txt", pl), 0);
	char *inl = tu_path(plain, "a/in.bin");
	assert_int_equal(symlink("real.bin", inl), 0);
	char *root = tu_path(plain, "a");
	assert_int_equal(store_open(&s, root, &err), WT_OK);
	assert_int_equal(store_read(s, "link.bin", 0, buf, 1, &err), WT_EPERM);
	assert_int_equal(store_read(s, "in.bin", 0, buf, 1, &err), WT_OK);
	store_close(s);
	free(root);
	free(inl);
	free(pl);
	free(plain);
	tu_rmrf(hub);
	free(snap);
	free(m);
	free(hub);
}

/* ---- pins ---- */

static wt_hash128 digest_of(const void *p, size_t n)
{
	common_hasher *h = common_hasher_new();
	assert_non_null(h);
	common_hasher_update(h, p, n);
	wt_hash128 d = common_hasher_digest(h);
	common_hasher_free(h);
	return d;
}

/*
 * A pin returns only once the coarse clock (what stamps a write's ctime on
 * kernels without fine-grained timestamps) has passed the file's ctime, so
 * any later write, even a same-size one that puts the mtime back, gets
 * another ctime and so another version. Before, a file written in the tick of
 * its pin was pinned at once: on such a kernel (Debian 12's 6.1) a second
 * write in that tick kept the version, and production read it under the
 * revision of the first with every check passing. (This kernel may stamp
 * ctimes finely, which hides that write; the order of clock and ctime below
 * is what a coarse kernel needs, and it held on no try before the change.)
 */
static void test_pin_ctime_tick(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("pintick");
	uint8_t a[512];
	tu_fill(a, sizeof(a), SEED);
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	char *wp = tu_path(dir, "w.bin");
	int late = 0;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(tu_write_file(dir, "w.bin", a, sizeof(a)), 0);
		store_pin *p;
		assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		struct stat st;
		assert_int_equal(stat(wp, &st), 0);
		late += now.tv_sec < st.st_ctim.tv_sec ||
		        (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec <= st.st_ctim.tv_nsec);
		store_pin_close(p);
	}
	printf("pins returned before the clock passed the ctime: %d of 5\n", late);
	assert_int_equal(late, 0);
	free(wp);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}

static void test_pin(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("pin");
	uint8_t a[4096], b[4096], got[4096];
	tu_fill(a, sizeof(a), SEED);
	tu_fill(b, sizeof(b), SEED + 1);
	assert_int_equal(tu_write_file(dir, "w.bin", a, sizeof(a)), 0);
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	store_pin *p;
	assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
	store_pin_set_digest(p, digest_of(a, sizeof(a)));
	/* a new file renamed over the name: the pin keeps reading the old one,
	 * whose bytes still match their digest */
	assert_int_equal(tu_write_file(dir, "w.new", b, sizeof(b)), 0);
	char *np = tu_path(dir, "w.new"), *wp = tu_path(dir, "w.bin");
	assert_int_equal(rename(np, wp), 0);
	assert_int_equal(store_pin_read(p, 0, got, sizeof(got), &err), WT_OK);
	assert_memory_equal(got, a, sizeof(a));
	assert_int_equal(store_pin_check(p, &err), WT_OK);
	assert_int_equal(store_pin_check(p, &err), WT_OK); /* settled: not read again */
	store_pin_close(p);
	/* the same without a digest: nothing can tell it from a write first */
	assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
	assert_int_equal(tu_write_file(dir, "w.new", a, sizeof(a)), 0);
	assert_int_equal(rename(np, wp), 0);
	assert_int_equal(store_pin_check(p, &err), WT_ECHANGED);
	assert_non_null(strstr(err.msg, "no digest"));
	store_pin_close(p);
	/* written in place (same size, mtime put back), then renamed over: the
	 * unlink moves the ctime as a rename over it alone does; the bytes tell */
	assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
	store_pin_set_digest(p, digest_of(a, sizeof(a)));
	{
		struct stat st0;
		assert_int_equal(stat(wp, &st0), 0);
		int fd = open(wp, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, b, 8, 0), 8);
		close(fd);
		struct timespec ts0[2] = {st0.st_atim, st0.st_mtim};
		assert_int_equal(utimensat(AT_FDCWD, wp, ts0, 0), 0);
		assert_int_equal(tu_write_file(dir, "w.new", a, sizeof(a)), 0);
		assert_int_equal(rename(np, wp), 0);
	}
	assert_int_equal(store_pin_check(p, &err), WT_ECHANGED);
	printf("written in place, then renamed over: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "written in place"));
	store_pin_close(p);
	/* an in-place write of the same size, mtime put back: caught */
	assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
	struct stat st;
	assert_int_equal(stat(wp, &st), 0);
	int fd = open(wp, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, a, 16, 100), 16);
	close(fd);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, wp, ts, 0), 0);
	assert_int_equal(store_pin_check(p, &err), WT_ECHANGED);
	assert_non_null(strstr(err.msg, "w.bin"));
	store_pin_close(p);
	store_close(s);
	free(np);
	free(wp);
	tu_rmrf(dir);
	free(dir);
}

/*
 * Written in place (same size, mtime put back), read, written back, then
 * renamed over: by the check the pinned file is unlinked with its size and
 * mtime unchanged, so its moved ctime is "unsure" and its bytes are compared
 * with the digest -- and they match again. Before, the check passed although
 * a read had returned the other bytes (A-B-A: a content check after the fact
 * cannot see what a read saw). Now a pinned read that finds the linked file's
 * version moved is WT_ECHANGED at once.
 */
static void test_pin_aba(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("pinaba");
	uint8_t a[4096], b[4096], got[4096];
	tu_fill(a, sizeof(a), SEED);
	tu_fill(b, sizeof(b), SEED + 1);
	assert_int_equal(tu_write_file(dir, "w.bin", a, sizeof(a)), 0);
	char *np = tu_path(dir, "w.new"), *wp = tu_path(dir, "w.bin");
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	store_pin *p;
	assert_int_equal(store_pin_open(s, "w.bin", &p, &err), WT_OK);
	store_pin_set_digest(p, digest_of(a, sizeof(a)));
	struct stat st0;
	assert_int_equal(stat(wp, &st0), 0);
	struct timespec ts0[2] = {st0.st_atim, st0.st_mtim};
	int fd = open(wp, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, 8, 0), 8); /* B */
	assert_int_equal(utimensat(AT_FDCWD, wp, ts0, 0), 0);
	int rr = store_pin_read(p, 0, got, sizeof(got), &err);
	bool saw_b = rr == WT_OK && memcmp(got, a, sizeof(a)) != 0;
	assert_int_equal(pwrite(fd, a, 8, 0), 8); /* A again */
	close(fd);
	assert_int_equal(utimensat(AT_FDCWD, wp, ts0, 0), 0);
	assert_int_equal(tu_write_file(dir, "w.new", a, sizeof(a)), 0);
	assert_int_equal(rename(np, wp), 0);
	int rc = store_pin_check(p, &err);
	printf("A-B-A: read %d (%s), check %d\n", rr, saw_b ? "other bytes" : "A", rc);
	/* other bytes read, and the check passed: never */
	assert_false(saw_b && rc == WT_OK);
	assert_int_equal(rr, WT_ECHANGED);
	store_pin_close(p);
	store_close(s);
	free(np);
	free(wp);
	tu_rmrf(dir);
	free(dir);
}

/* ---- a checkpoint whose source changes while it is open ---- */

static const st_desc tiny[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.norm.weight", WT_BF16, 1, {64}},
};

static void test_ckpt_source_change(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckchg");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, 2, 1, SEED), 0);
	char *mp = tu_path(dir, "model.safetensors");
	size_t len;
	char *orig = tu_read_file(mp, &len);
	assert_non_null(orig);
	store *s;
	ckpt *c;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	char rev[65];
	snprintf(rev, sizeof(rev), "%s", ckpt_revision(c));
	const ckpt_tensor *t = ckpt_find(c, "model.norm.weight");
	uint8_t before[128], after[128];
	assert_int_equal(ckpt_read(c, t, 0, before, sizeof(before), &err), WT_OK);
	/* replaced by a new file (mv): reads still see the revision's bytes */
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, 2, 1, SEED + 9), 0);
	assert_int_equal(ckpt_read(c, t, 0, after, sizeof(after), &err), WT_OK);
	assert_memory_equal(before, after, sizeof(before));
	assert_int_equal(ckpt_check(c, &err), WT_OK);
	ckpt *c2;
	assert_int_equal(ckpt_open(&c2, s, &err), WT_OK);
	assert_string_not_equal(ckpt_revision(c2), rev);
	/* an in-place write into the file c2 has open: ckpt_check says so */
	int fd = open(mp, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\xff\xff", 2, (off_t)(len - 2)), 2);
	close(fd);
	assert_int_equal(ckpt_check(c2, &err), WT_ECHANGED);
	assert_non_null(strstr(err.msg, "model.safetensors"));
	ckpt_close(c2);
	ckpt_close(c);
	store_close(s);
	free(orig);
	free(mp);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hf_snapshot),    cmocka_unit_test(test_pin),
	    cmocka_unit_test(test_pin_aba),        cmocka_unit_test(test_ckpt_source_change),
	    cmocka_unit_test(test_pin_ctime_tick), cmocka_unit_test(test_symlink_swap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
