/*
 * common.h — internal helpers shared by every module (not installed):
 * checked size arithmetic, XXH3-128 digests, logging.
 */
#ifndef WT_COMMON_H
#define WT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "weights/error.h"
#include "weights/layout.h"

/* ---- checked arithmetic (STYLE.md 8): return false on overflow ---- */
static inline bool wt_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}
static inline bool wt_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* ---- functions of a library loaded at run time (dlopen: libcurl, the CUDA runtime) ---- */
typedef struct common_dl_sym {
	const char *name; /* the library's symbol */
	size_t off;       /* where its function pointer goes in the caller's table */
} common_dl_sym;

/* dlsym each of syms[0..n) in h (a dlopen handle) into table at its offset; NULL when all
 * resolved, else the first name h lacks (table then partly filled: fill a scratch copy). */
const char *common_dl_bind(void *h, const common_dl_sym *syms, size_t n, void *table);

/* ---- XXH3-128 digests (integrity hashes of tensors and chunks) ---- */
typedef struct wt_hash128 {
	uint64_t hi;
	uint64_t lo;
} wt_hash128;

#define WT_HASH_HEX_LEN 32 /* without NUL */

/* Index of name among n records of `stride` bytes sorted (strcmp) by the
 * `const char *` member at byte offset name_off; WT_ENOTFOUND if absent. */
int common_find_name(const void *base, size_t n, size_t stride, size_t name_off, const char *name,
                     size_t *idx);

wt_hash128 common_hash128(const void *data, size_t len);
/* Copy len bytes src -> dst and return their XXH3-128, hashed from dst piece by
 * piece while each piece is still in L2: the bytes cross memory once, and the
 * digest is of the bytes the caller got. */
wt_hash128 common_hash128_copy(void *dst, const void *src, size_t len);
/* 16 bytes big-endian (hi then lo): the canonical byte form in protobuf and cache keys. */
void common_hash128_to_bytes(wt_hash128 h, uint8_t out[16]);
wt_hash128 common_hash128_from_bytes(const uint8_t in[16]);
/* 32 lowercase hex chars + NUL. */
void common_hash128_hex(wt_hash128 h, char out[WT_HASH_HEX_LEN + 1]);
/* snprintf-append at buf + *len (cap bytes in all); *len grows by what was
 * needed, so *len >= cap afterwards means the text did not fit. */
void common_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "12.30 of 120.00 GiB (10%)" (MiB below 1 GiB), or "size not known yet"
 * when total is 0; into buf, which is returned. */
const char *common_fmt_progress(char *buf, size_t cap, uint64_t done, uint64_t total);

static inline bool common_hash128_eq(wt_hash128 a, wt_hash128 b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* Streaming XXH3-128 (for tensors produced or received in pieces). */
typedef struct common_hasher common_hasher;
common_hasher *common_hasher_new(void); /* NULL on ENOMEM */
void common_hasher_update(common_hasher *h, const void *data, size_t len);
wt_hash128 common_hasher_digest(const common_hasher *h);
void common_hasher_reset(common_hasher *h);
void common_hasher_free(common_hasher *h);                             /* NULL is a no-op */
void common_hasher_copy(common_hasher *dst, const common_hasher *src); /* dst := src's state */
/* common_hash128_copy that also feeds each copied piece, while it is in L2,
 * to `also` (NULL = none): a chunk's hash and its tensor's in one pass. */
wt_hash128 common_hash128_copy_also(void *dst, const void *src, size_t len, common_hasher *also);

/* ---- exclusion patterns (SHARDS.md section 5; exclude_re.c) ---- */
/* Check pat against the WT_EXCLUDE_* limits of weights/layout.h (length, back-references,
 * group depth, regex positions with repetitions expanded) and build its anchored POSIX
 * ERE. On WT_OK: *out (if out) is the ERE, owned by the caller (free()); *positions (if
 * positions) its expanded size. Errors are WT_EINVAL naming pat, the limit and a fix. */
int common_excl_regex(const char *pat, char **out, uint32_t *positions, wt_errbuf *err);

/* ---- command lines (opt.c) ---- */
struct option;
/*
 * getopt_long over opts ({name, has_arg, NULL, short char or 0}..., {NULL}), one
 * flag per call: its index in opts (its value in *val, NULL for a switch), -1
 * after the last flag (positional arguments are then argv[optind..argc): flags
 * and positionals may mix), or -2 with msg naming the flag: unknown, abbreviated
 * (long flags are written in full), a missing value, a value given to a switch.
 * Set optind = 0 before the first call of a parse (glibc: full re-initialisation).
 * A long option without a short alias is told apart by its index only; messages
 * for a missing value name it best with a short alias or a val of its own > 127.
 */
int common_opt_next(int argc, char **argv, const struct option *opts, const char **val, char *msg,
                    size_t cap);

/* ---- layout flags (layout.c): the names wt_layout_parse_arg takes ---- */
/* The i-th flag ("--tp-size", ...); NULL past the last. */
const char *common_layout_flag(size_t i);
/* Set the layout value of flag (one of common_layout_flag's) from val; the message
 * names the flag and the accepted values. WT_OK or WT_EINVAL. */
int common_layout_set(wt_layout *l, const char *flag, const char *val, wt_errbuf *err);

/* ---- raw layouts (layout_raw.c; wt_layout.raw / include) ---- */
void common_layout_clear_include(wt_layout *l);
/* WT_OK for a partitioned layout without include names, or a raw layout with every other
 * member at its default; WT_EINVAL naming the member otherwise. */
int common_layout_check_raw(const wt_layout *l, wt_errbuf *err);
/* "raw" or "raw,include=[a;b]" (sorted, de-duplicated); snprintf-like. */
size_t common_layout_format_raw(const wt_layout *l, char *buf, size_t cap);

/* ---- logging: one sink, syslog levels, printf-checked, cheap when off ---- */
enum { WT_LOG_ERR = 3, WT_LOG_WARNING = 4, WT_LOG_NOTICE = 5, WT_LOG_INFO = 6, WT_LOG_DEBUG = 7 };

typedef void (*common_log_fn)(void *ctx, int level, const char *msg);

/* Process-wide sink; default writes "2026-11-29T16:00:00Z warning: msg" to stderr at
 * WT_LOG_NOTICE and above. Library code (libweights) must not log through this
 * sink; it takes the caller's logger instead. */
void common_log_set(common_log_fn fn, void *ctx, int max_level);
int common_log_level(void);
/* Parse "err|warning|notice|info|debug"; -1 if unknown. */
int common_log_level_from_name(const char *name);
/* Format and send to the sink as one line: control bytes, DEL, C1 controls and bytes that
 * are not valid UTF-8 reach the sink escaped (\n, \r, \t, \xNN), so a string from a
 * client can neither forge a log line nor drive the terminal. Messages cap at 1023 bytes
 * before escaping. */
void common_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define WT_LOG(level, ...)                                                                         \
	do {                                                                                       \
		if ((level) <= common_log_level())                                                 \
			common_log((level), __VA_ARGS__);                                          \
	} while (0)

/* Broken invariant: print and abort. Never for bad input. */
#define WT_ASSERT(cond)                                                                            \
	do {                                                                                       \
		if (!(cond))                                                                       \
			common_assert_fail(#cond, __FILE__, __LINE__);                             \
	} while (0)
_Noreturn void common_assert_fail(const char *cond, const char *file, int line);

/* Is data[0..len) strict UTF-8 (no overlong forms, surrogates or code points
 * above U+10FFFF)? A NUL byte counts as invalid unless allow_nul. */
bool common_utf8_valid(const void *data, size_t len, bool allow_nul);
/* Make the C string s strict UTF-8 in place: each byte that starts no valid
 * sequence (a character cut short, stray bytes) becomes '?'. For text sent
 * to a peer that refuses anything else (error replies quoting a request's
 * text cut at a byte count). */
void common_utf8_scrub(char *s);
/* Text from a peer or a client on its way to a log or a terminal: does s hold
 * a control byte, DEL or any non-ASCII byte (then escape it)? */
bool common_text_needs_escape(const char *s);
/* Does s hold a control character: a C0 byte, DEL or a UTF-8-encoded C1
 * control (U+0080..U+009F)? Invalid UTF-8 is not one (see common_utf8_valid). */
bool common_text_has_control(const char *s);
/* Copy s into out (cap >= 4 * strlen(s) + 1 to keep it whole; less truncates at
 * a whole escape) with control bytes, DEL, C1 controls and bytes that are not
 * valid UTF-8 written as \n, \r, \t or \xNN, so that it cannot start a new
 * line or move the terminal cursor; keep_newlines lets '\n' through (multi-line
 * text such as STATS). Valid UTF-8 text stays as it is. */
void common_text_escape(const char *s, char *out, size_t cap, bool keep_newlines);
/* The same into a malloc'd string (NULL when out of memory). */
char *common_text_escape_dup(const char *s, bool keep_newlines);

/* ---- atomic file writes (atomic_file.c): "<path>.tmp.<pid>" + rename ----
 * Readers see the old file or the whole new one. durable: fsync the file
 * before the rename and its folder after, so it survives a power cut once
 * commit returns. Any failure before the rename unlinks the temp file and
 * leaves path as it was; once renamed, commit returns WT_OK (the file is the
 * new one: a caller must not undo its change), and a failed folder fsync is
 * logged as a warning.
 * Streaming: open, write..., then commit or abort (commit and abort both end
 * the write; abort after a failed open is a no-op). */
typedef struct common_afile {
	int fd;
	bool durable;
	char path[4096];
	char tmp[4096 + 24];
} common_afile;
int common_afile_open(common_afile *f, const char *path, bool durable, wt_errbuf *err);
/* The temporary file a common_afile_open(path) of this process writes
 * ("<path>.tmp.<pid>") into buf; false: does not fit in cap. For a signal
 * handler that removes it (unlink is async-signal-safe; this is not). */
bool common_afile_tmp_path(const char *path, char *buf, size_t cap);
int common_afile_write(common_afile *f, const void *data, size_t len, wt_errbuf *err);
/* common_afile_write for st_writer-style callbacks (ctx = the common_afile). */
int common_afile_write_cb(void *ctx, const void *data, size_t len);
/* len bytes at file offset `at` (the file grows as needed; holes read as zeros). */
int common_afile_pwrite(common_afile *f, const void *data, size_t len, uint64_t at, wt_errbuf *err);
int common_afile_commit(common_afile *f, wt_errbuf *err);
void common_afile_abort(common_afile *f);
/* The whole file in one call. */
int common_write_file_atomic(const char *path, const void *data, size_t len, bool durable,
                             wt_errbuf *err);

/* Monotonic clock in nanoseconds. */
uint64_t common_now_ns(void);
/* The time ms milliseconds from now on clock clk (CLOCK_REALTIME for
 * pthread_cond_timedwait's default clock), as a timespec. */
struct timespec common_timespec_in(clockid_t clk, uint64_t ms);

#endif
