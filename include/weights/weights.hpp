/*
 * weights.hpp — libweights for C++17 engines: RAII handles and exceptions over
 * the C API (header only; link -lweights as from C). Thin on purpose: every
 * call is one C call; the rules, limits and messages are the C library's.
 *
 *     weights::Client c({"tcp://10.0.0.1:7070"});
 *     weights::Manifest m = c.manifest("llama-8b", weights::Layout().tp(2, 1));
 *     weights::HostSink h;
 *     c.fetch(m, h);                          // or any weights::Sink subclass
 *     auto w = h.find("model.norm.weight");   // std::optional<weights::Bytes>
 *
 * Errors: every C call that fills a wt_errbuf is checked and a failure thrown
 * as weights::Error (code(), name() = wt_errname, message()). An exception a
 * weights::Sink callback throws never crosses the C library: it is caught,
 * the callback fails (a weights::Error keeps its code; std::bad_alloc is
 * WT_ENOMEM; anything else WT_ECANCELED with what()), so the fetch aborts the
 * sink as engine.h says, and the original exception is rethrown by the call
 * that drove the sink (fetch, Fetch::wait, bcast_receive, ...).
 *
 * fetch_update throws weights::UpdateError (an Error with the update's report)
 * when the library fails it; BcastRoot::outcome() gives a broadcast's whole
 * result without throwing. A Client's Logger (a std::function) is called on
 * any thread; an exception it throws is swallowed and counted (log_errors()).
 *
 * Ownership: Client, Manifest, HostSink, FileSink, CudaSink, Fetch and
 * BcastRoot own their C handle, are move-only, and a moved-from object only
 * accepts destruction and assignment. get() borrows the C handle for calls
 * not wrapped here. Thread rules are the C handles'; a Sink (like a C sink)
 * takes one fetch at a time and must outlive the fetches it is given.
 * Admin, registration and model lists: weights::Admin (weights_admin.hpp,
 * included at the end of this header).
 */
#ifndef WEIGHTS_WEIGHTS_HPP
#define WEIGHTS_WEIGHTS_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "weights/weights.hpp needs C++17 (-std=c++17); older C++ and C use the C headers"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weights/async.h"
#include "weights/bcast.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/error.h"
#include "weights/layout.h"
#include "weights/weights.h"

namespace weights
{

/* A wt_err code with the library's message; what() is "message (WT_ENAME)". */
class Error : public std::runtime_error
{
public:
	Error(int code, const std::string &msg)
	    : std::runtime_error(msg + " (" + wt_errname(code) + ")"), code_(code), len_(msg.size())
	{
	}
	int code() const noexcept { return code_; }
	const char *name() const noexcept { return wt_errname(code_); }
	std::string message() const { return std::string(what(), len_); }

private:
	int code_;
	size_t len_;
};

/*
 * A failed Client::fetch_update: the code and message, and the report as
 * wt_client_fetch_update left it (client.h): on WT_ELAYOUT (full reload
 * needed, nothing fetched) the revisions, ranks and totals; after a failure
 * mid-fetch bytes_updated = the verified bytes the sink was given, which an
 * update sink wrote in place. All zero when the arguments were refused.
 */
class UpdateError : public Error
{
public:
	UpdateError(int code, const std::string &msg, const wt_update_report &r)
	    : Error(code, msg), report_(r)
	{
	}
	const wt_update_report &report() const noexcept { return report_; }

private:
	wt_update_report report_;
};

/* A client's diagnostics (level: WT_CLIENT_LOG_*; msg valid for the call). */
using Logger = std::function<void(int level, std::string_view msg)>;

namespace detail
{
struct Err {
	wt_errbuf e;
	Err() noexcept { wt_errclear(&e); }
	/* the message of failure rv: the library's, else wt_strerror */
	std::string text(int rv) const { return e.msg[0] != '\0' ? e.msg : wt_strerror(rv); }
	void check(int rv) const
	{
		if (rv != WT_OK)
			throw Error(rv, text(rv));
	}
};
template <class T, void (*F)(T *)> struct Free {
	void operator()(T *p) const noexcept { F(p); }
};
template <class T, void (*F)(T *)> using Own = std::unique_ptr<T, Free<T, F>>;
/* f(args..., errbuf), thrown on failure */
template <class F, class... A> void call(F f, A... a)
{
	Err e;
	e.check(f(a..., &e.e));
}
/* own = the handle create(&handle, args..., errbuf) made */
template <class O, class F, class... A> void create(O &own, F create, A... a)
{
	typename O::pointer p = nullptr;
	call(create, &p, a...);
	own.reset(p);
}
struct SinkAccess;
} // namespace detail

/* Builder over wt_layout (defaults of wt_layout_init); copyable. */
class Layout
{
public:
	Layout() noexcept { wt_layout_init(&l_); }
	~Layout() { wt_layout_clear(&l_); }
	Layout(const Layout &o) : Layout()
	{
		int rv = wt_layout_copy(&l_, &o.l_);
		if (rv != WT_OK)
			throw Error(rv, std::string("copying a layout: ") + wt_strerror(rv));
	}
	Layout(Layout &&o) noexcept : l_(o.l_) { wt_layout_init(&o.l_); }
	Layout &operator=(Layout o) noexcept
	{
		std::swap(l_, o.l_);
		return *this;
	}
	Layout &tp(uint32_t size, uint32_t rank) noexcept
	{
		l_.tp_size = size;
		l_.tp_rank = rank;
		return *this;
	}
	Layout &ep(uint32_t size, uint32_t rank) noexcept
	{
		l_.ep_size = size;
		l_.ep_rank = rank;
		return *this;
	}
	Layout &quant(const std::string &name)
	{
		detail::call(wt_quant_from_name, name.c_str(), &l_.quant);
		return *this;
	}
	Layout &dtype(wt_dtype d) noexcept
	{
		l_.dtype = d;
		return *this;
	}
	Layout &exclude(const std::string &pattern)
	{
		detail::call(wt_layout_add_exclude, &l_, pattern.c_str());
		return *this;
	}
	Layout &raw() noexcept
	{
		l_.raw = 1;
		return *this;
	}
	Layout &include(const std::string &name)
	{
		detail::call(wt_layout_add_include, &l_, name.c_str());
		return *this;
	}
	void check() const { detail::call(wt_layout_check, &l_); }
	/* Canonical text without the rank (wt_layout_format). */
	std::string text() const
	{
		size_t n = wt_layout_format(&l_, nullptr, 0);
		if (n == SIZE_MAX)
			throw Error(WT_ETOOBIG,
			            "layout has more names than its canonical text holds");
		std::string s(n, '\0');
		wt_layout_format(&l_, s.data(), n + 1);
		return s;
	}
	wt_layout &c() noexcept { return l_; } /* the members not set above */
	const wt_layout *get() const noexcept { return &l_; }

private:
	wt_layout l_;
};

/* A manifest borrowed from its owner (a Manifest, or a sink's begin()). */
class ManifestView
{
public:
	explicit ManifestView(const wt_manifest *m) noexcept : m_(m) {}
	const wt_manifest *get() const noexcept { return m_; }
	std::string model() const { return wt_manifest_model(m_); }
	std::string revision() const { return wt_manifest_revision(m_); }
	std::string layout_text() const { return wt_manifest_layout_text(m_); }
	uint32_t tp_rank() const noexcept { return wt_manifest_tp_rank(m_); }
	uint32_t ep_rank() const noexcept { return wt_manifest_ep_rank(m_); }
	uint64_t total_bytes() const noexcept { return wt_manifest_total_bytes(m_); }
	size_t n_tensors() const noexcept { return wt_manifest_n_tensors(m_); }
	bool live() const noexcept { return wt_manifest_live(m_) != 0; }
	int mode() const noexcept { return wt_manifest_mode(m_); }
	/* Tensor i (name order); the name is borrowed from the manifest. */
	wt_tensor_info tensor(size_t i) const
	{
		wt_tensor_info t;
		int rv = wt_manifest_tensor(m_, i, &t);
		if (rv != WT_OK)
			throw Error(rv, "tensor index " + std::to_string(i) +
			                    " out of range: the manifest has " +
			                    std::to_string(n_tensors()) + " tensors");
		return t;
	}
	std::optional<size_t> find(const std::string &name) const noexcept
	{
		size_t i = 0;
		if (wt_manifest_find(m_, name.c_str(), &i) != WT_OK)
			return std::nullopt;
		return i;
	}

protected:
	const wt_manifest *m_;
};

class Manifest : public ManifestView
{
public:
	explicit Manifest(wt_manifest *m) noexcept : ManifestView(m), own_(m) {} /* takes m */
	Manifest(Manifest &&o) noexcept : ManifestView(o.m_), own_(std::move(o.own_))
	{
		o.m_ = nullptr;
	}
	Manifest &operator=(Manifest &&o) noexcept
	{
		if (this == &o)
			return *this;
		own_ = std::move(o.own_);
		m_ = own_.get();
		o.m_ = nullptr;
		return *this;
	}

private:
	detail::Own<wt_manifest, wt_manifest_free> own_;
};

/* wt_manifest_delta: which tensors of now differ from old. */
struct Delta {
	std::vector<unsigned char> changed; /* per tensor of now: 1 = changed */
	size_t n_changed = 0;
	uint64_t bytes = 0;
};
inline Delta delta(const ManifestView &old, const ManifestView &now)
{
	Delta d;
	d.changed.resize(now.n_tensors());
	detail::call(wt_manifest_delta, old.get(), now.get(), d.changed.data(), &d.n_changed,
	             &d.bytes);
	return d;
}

/*
 * An engine's own sink: override write() and whichever other callbacks it
 * needs; engine.h's contract holds (order, verified bytes, abort once after a
 * failure past begin). Throw to fail a callback. Neither copyable nor movable.
 */
class Sink
{
public:
	Sink() noexcept
	{
		wt_sink_ops_init(&ops_);
		ops_.begin = [](wt_sink *s, const wt_manifest *m, wt_errbuf *e) {
			return guard(s, e, [m](Sink &k) { k.begin(ManifestView(m)); });
		};
		ops_.tensor_begin = [](wt_sink *s, size_t t, wt_errbuf *e) {
			return guard(s, e, [t](Sink &k) { k.tensor_begin(t); });
		};
		ops_.write = [](wt_sink *s, size_t t, uint64_t off, const void *d, size_t n,
		                wt_errbuf *e) {
			return guard(s, e, [&](Sink &k) { k.write(t, off, d, n); });
		};
		ops_.tensor_end = [](wt_sink *s, size_t t, wt_errbuf *e) {
			return guard(s, e, [t](Sink &k) { k.tensor_end(t); });
		};
		ops_.end = [](wt_sink *s, wt_errbuf *e) {
			return guard(s, e, [](Sink &k) { k.end(); });
		};
		ops_.abort = [](wt_sink *s) { keep(self(s), [](Sink &k) { k.abort(); }); };
		ops_.recv_buf = [](wt_sink *s, size_t t, uint64_t off, size_t n) {
			void *p = nullptr;
			keep(self(s), [&](Sink &k) { p = k.recv_buf(t, off, n); });
			return p;
		};
		th_.base.ops = &ops_;
		th_.self = this;
	}
	virtual ~Sink() = default;
	Sink(const Sink &) = delete;
	Sink &operator=(const Sink &) = delete;

	virtual void begin(ManifestView) {}
	virtual void tensor_begin(size_t) {}
	virtual void write(size_t tensor, uint64_t off, const void *data, size_t len) = 0;
	virtual void tensor_end(size_t) {}
	virtual void end() {}
	virtual void abort() {} /* undo partial output; an exception here is kept, not reported */
	/* engine.h recv_buf: nullptr (the default) sends the chunk through write() */
	virtual void *recv_buf(size_t, uint64_t, size_t) { return nullptr; }

private:
	friend struct detail::SinkAccess;
	friend struct SinkRef;
	struct Thunk {
		wt_sink base; /* first: the C callbacks get the Thunk back */
		Sink *self;
	};
	static Sink &self(wt_sink *s) noexcept { return *reinterpret_cast<Thunk *>(s)->self; }
	template <class F> static void keep(Sink &k, F &&f) noexcept
	{
		try {
			f(k);
		} catch (...) {
			if (!k.exc_)
				k.exc_ = std::current_exception();
		}
	}
	template <class F> static int guard(wt_sink *s, wt_errbuf *err, F &&f) noexcept
	{
		Sink &k = self(s);
		if (k.exc_) /* recv_buf threw */
			return wt_seterr(err, WT_ECANCELED, "sink: an earlier callback threw");
		try {
			f(k);
			return WT_OK;
		} catch (const Error &x) {
			k.exc_ = std::current_exception();
			return wt_seterr(err, x.code(), "%s", x.message().c_str());
		} catch (const std::bad_alloc &) {
			k.exc_ = std::current_exception();
			return wt_seterr(err, WT_ENOMEM, "sink: out of memory (std::bad_alloc)");
		} catch (const std::exception &x) {
			k.exc_ = std::current_exception();
			return wt_seterr(err, WT_ECANCELED, "sink: %s", x.what());
		} catch (...) {
			k.exc_ = std::current_exception();
			return wt_seterr(err, WT_ECANCELED,
			                 "sink: an exception that is no std::exception");
		}
	}
	wt_sink_ops ops_;
	Thunk th_;
	std::exception_ptr exc_;
};

struct Bytes {
	const void *data; /* borrowed from the sink: valid until its next fetch or destruction */
	uint64_t nbytes;
};

class HostSink
{
public:
	HostSink() { detail::create(h_, wt_host_sink_create); }
	wt_sink *sink() const noexcept { return wt_host_sink_sink(h_.get()); }
	wt_sink *update_sink() const noexcept { return wt_host_sink_update_sink(h_.get()); }
	size_t n_tensors() const noexcept { return wt_host_sink_n_tensors(h_.get()); }
	std::optional<Bytes> find(const std::string &name) const noexcept
	{
		Bytes b{nullptr, 0};
		if (wt_host_sink_find(h_.get(), name.c_str(), &b.data, &b.nbytes) != WT_OK)
			return std::nullopt;
		return b;
	}
	wt_host_sink *get() const noexcept { return h_.get(); }

private:
	detail::Own<wt_host_sink, wt_host_sink_destroy> h_;
};

class FileSink
{
public:
	explicit FileSink(const std::string &path, bool do_fsync = false)
	{
		detail::create(f_, wt_file_sink_create, path.c_str(), do_fsync ? 1 : 0);
	}
	wt_sink *sink() const noexcept { return wt_file_sink_sink(f_.get()); }
	wt_file_sink *get() const noexcept { return f_.get(); }

private:
	detail::Own<wt_file_sink, wt_file_sink_destroy> f_;
};

class CudaSink
{
public:
	explicit CudaSink(int device) { detail::create(h_, wt_cuda_sink_create, device); }
	wt_sink *sink() const noexcept { return wt_cuda_sink_sink(h_.get()); }
	wt_sink *update_sink() const noexcept { return wt_cuda_sink_update_sink(h_.get()); }
	size_t n_tensors() const noexcept { return wt_cuda_sink_n_tensors(h_.get()); }
	/* a device pointer, borrowed (wt_cuda_sink_find) */
	std::optional<std::pair<void *, uint64_t>> find(const std::string &name) const noexcept
	{
		std::pair<void *, uint64_t> r{nullptr, 0};
		if (wt_cuda_sink_find(h_.get(), name.c_str(), &r.first, &r.second) != WT_OK)
			return std::nullopt;
		return r;
	}
	wt_cuda_sink *get() const noexcept { return h_.get(); }

private:
	detail::Own<wt_cuda_sink, wt_cuda_sink_destroy> h_;
};

class BcastRoot;

/* What a fetch drives: a C sink, or a wrapper above (its Sink rethrows). */
struct SinkRef {
	SinkRef(wt_sink *s) noexcept : c(s) {}
	SinkRef(Sink &s) noexcept : c(&s.th_.base), cxx(&s) {}
	SinkRef(const HostSink &s) noexcept : c(s.sink()) {}
	SinkRef(const FileSink &s) noexcept : c(s.sink()) {}
	SinkRef(const CudaSink &s) noexcept : c(s.sink()) {}
	SinkRef(const BcastRoot &r) noexcept;
	wt_sink *c = nullptr;
	Sink *cxx = nullptr; /* whose exception to rethrow */
};

namespace detail
{
struct SinkAccess {
	static void reset(const SinkRef &s) noexcept
	{
		if (s.cxx != nullptr)
			s.cxx->exc_ = nullptr;
	}
	static void rethrow(const SinkRef &s)
	{
		if (s.cxx != nullptr && s.cxx->exc_)
			std::rethrow_exception(s.cxx->exc_);
	}
};
/* One C call that drives sink s: call(c_sink, errbuf) -> wt_err, returned
 * after the exception s threw (if any) was rethrown. */
template <class F> int drive_rv(const SinkRef &s, Err &e, F &&call)
{
	SinkAccess::reset(s);
	int rv = call(s.c, &e.e);
	SinkAccess::rethrow(s);
	return rv;
}
template <class F> void drive(const SinkRef &s, F &&call)
{
	Err e;
	e.check(drive_rv(s, e, std::forward<F>(call)));
}
/* What wt_client_opts.log_ctx points at: on the heap, so a moved Client keeps
 * it; freed after the wt_client that calls it was closed. */
struct LogHook {
	Logger fn;
	std::atomic<uint64_t> errors{0};
	explicit LogHook(Logger f) : fn(std::move(f)) {}
	/* any thread (nng's too): no exception leaves it */
	static void call(void *ctx, int level, const char *msg) noexcept
	{
		LogHook *h = static_cast<LogHook *>(ctx);
		try {
			h->fn(level, msg);
		} catch (...) {
			h->errors.fetch_add(1, std::memory_order_relaxed);
		}
	}
};
} // namespace detail

/* An asynchronous fetch (async.h); destruction cancels it and waits for its end. */
class Fetch
{
public:
	bool poll() const noexcept { return wt_fetch_poll(h_.get()) != 0; }
	void cancel() const noexcept { wt_fetch_cancel(h_.get()); }
	/* false while it runs after timeout_ms (< 0: forever); true when it succeeded;
	 * throws its error, or the exception its Sink threw. */
	bool wait(int64_t timeout_ms = -1) const
	{
		detail::Err e;
		int result = WT_OK;
		int rv = wt_fetch_wait(h_.get(), timeout_ms, &result, &e.e);
		if (rv == WT_ETIMEDOUT)
			return false;
		e.check(rv);
		detail::SinkAccess::rethrow(s_);
		e.check(result);
		return true;
	}
	wt_fetch_handle *get() const noexcept { return h_.get(); }

private:
	friend class Client;
	Fetch(wt_fetch_handle *h, const SinkRef &s) noexcept : h_(h), s_(s) {}
	detail::Own<wt_fetch_handle, wt_fetch_free> h_;
	SinkRef s_;
};

struct Watch {
	std::string revision;
	bool changed;
};

/*
 * A wt_client: any thread, concurrent calls (client.h). log (optional)
 * replaces o.log and o.log_ctx; o.log_level still filters. It is called from
 * the calling thread or nng's, possibly at once: it must be thread-safe and
 * must not call the client. An exception it throws is swallowed (the
 * message is lost) and counted by log_errors(). The Client owns it: it lives
 * until the C client is closed, moves with the Client included.
 */
class Client
{
public:
	static wt_client_opts options() noexcept
	{
		wt_client_opts o;
		wt_client_opts_init(&o);
		return o;
	}
	explicit Client(const wt_client_opts &o, Logger log = nullptr)
	{
		wt_client_opts co = o;
		if (log) {
			log_ = std::make_unique<detail::LogHook>(std::move(log));
			co.log = detail::LogHook::call;
			co.log_ctx = log_.get();
		}
		detail::create(c_, wt_client_open, &co);
	}
	/* o's endpoints are replaced by these */
	explicit Client(const std::vector<std::string> &endpoints, wt_client_opts o = options(),
	                Logger log = nullptr)
	{
		std::vector<const char *> eps;
		for (const std::string &s : endpoints)
			eps.push_back(s.c_str());
		o.endpoints = eps.data();
		o.n_endpoints = eps.size();
		*this = Client(o, std::move(log));
	}
	Client(Client &&) noexcept = default;
	Client &operator=(Client &&o) noexcept
	{
		c_ = std::move(o.c_); /* closes ours first: then nothing calls our logger */
		log_ = std::move(o.log_);
		return *this;
	}
	/* exceptions the Logger threw (each lost its message) */
	uint64_t log_errors() const noexcept
	{
		return log_ ? log_->errors.load(std::memory_order_relaxed) : 0;
	}
	Manifest manifest(const std::string &model, const Layout &l,
	                  const wt_manifest_opts *o = nullptr) const
	{
		wt_manifest *m = nullptr;
		detail::call(wt_client_get_manifest_opts, c_.get(), model.c_str(), l.get(), o, &m);
		return Manifest(m);
	}
	void check_layout(const std::string &model, const Layout &l) const
	{
		detail::call(wt_client_check_layout, c_.get(), model.c_str(), l.get());
	}
	void fetch(const ManifestView &m, const SinkRef &s, const wt_fetch_opts *o = nullptr) const
	{
		detail::drive(s, [&](wt_sink *k, wt_errbuf *e) {
			return wt_client_fetch(c_.get(), m.get(), k, o, e);
		});
	}
	/* client, m, s and o->stats must outlive the Fetch (async.h) */
	Fetch fetch_start(const ManifestView &m, const SinkRef &s,
	                  const wt_fetch_opts *o = nullptr) const
	{
		wt_fetch_handle *h = nullptr;
		detail::drive(s, [&](wt_sink *k, wt_errbuf *e) {
			return wt_client_fetch_start(c_.get(), m.get(), k, o, nullptr, &h, e);
		});
		return Fetch(h, s);
	}
	/* the current revision, or the next one when known is it (wt_client_watch) */
	Watch watch(const std::string &model, const std::string &known, uint32_t timeout_ms) const
	{
		char rev[65] = "";
		int changed = 0;
		detail::call(wt_client_watch, c_.get(), model.c_str(), known.c_str(), timeout_ms,
		             rev, &changed);
		return Watch{rev, changed != 0};
	}
	void fetch_tensors(const ManifestView &m, const std::vector<unsigned char> &select,
	                   const SinkRef &s, const wt_fetch_opts *o = nullptr) const
	{
		if (select.size() != m.n_tensors())
			throw Error(WT_EINVAL, "select has " + std::to_string(select.size()) +
			                           " flags, the manifest " +
			                           std::to_string(m.n_tensors()) + " tensors");
		detail::drive(s, [&](wt_sink *k, wt_errbuf *e) {
			return wt_client_fetch_tensors(c_.get(), m.get(), select.data(), k, o, e);
		});
	}
	/* s writes in place: HostSink::update_sink(), CudaSink::update_sink().
	 * Throws UpdateError (with the report) when the library fails the update;
	 * an exception a weights::Sink threw is rethrown as itself. */
	wt_update_report fetch_update(const ManifestView &old, const ManifestView &now,
	                              const SinkRef &s, const wt_fetch_opts *o = nullptr) const
	{
		wt_update_report r{};
		detail::Err err;
		int rv = detail::drive_rv(s, err, [&](wt_sink *k, wt_errbuf *e) {
			return wt_client_fetch_update(c_.get(), old.get(), now.get(), k, o, &r, e);
		});
		if (rv != WT_OK)
			throw UpdateError(rv, err.text(rv), r);
		return r;
	}
	wt_client *get() const noexcept { return c_.get(); }

private:
	/* log_ before c_: destroyed after it (the client may log until closed) */
	std::unique_ptr<detail::LogHook> log_;
	detail::Own<wt_client, wt_client_close> c_;
};

inline wt_bcast_opts bcast_options() noexcept
{
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	return o;
}

/* A broadcast's result (wt_bcast_root_result). */
struct BcastResult {
	uint32_t replicas = 0; /* n_members - 1: the replicas it was for */
	uint32_t done = 0;     /* replicas that received and verified every tensor */
	/* empty when all did; else the first failure, naming the replica
	 * ("replica K dropped: ...", "replica K failed: ...") or why the broadcast
	 * did not begin */
	std::optional<Error> error;
	/* (1.7) one entry per replica that did not get everything, each naming
	 * it: its own failure (wt_bcast_root_replica), "replica K did not join",
	 * or, when the broadcast did not begin, why */
	std::vector<Error> failures;
	bool ok() const noexcept { return !error; }
};

/* The root of a broadcast (bcast.h); inner must outlive it. Pass it to fetch(). */
class BcastRoot
{
public:
	BcastRoot(const wt_bcast_opts &o, const SinkRef &inner)
	    : inner_(inner), replicas_(o.n_members > 0 ? o.n_members - 1 : 0)
	{
		detail::create(r_, wt_bcast_root_create, &o, inner.c);
	}
	std::string url() const { return wt_bcast_root_url(r_.get()); }
	/* after a broadcast: the whole result, never thrown */
	BcastResult outcome() const
	{
		BcastResult b;
		b.replicas = replicas_;
		detail::Err e;
		int rv = wt_bcast_root_result(r_.get(), &b.done, &e.e);
		if (rv != WT_OK)
			b.error.emplace(rv, e.text(rv));
		for (uint32_t k = 0; k < replicas_; k++) {
			detail::Err ek;
			int rk = wt_bcast_root_replica(r_.get(), k, &ek.e);
			if (rk != WT_OK)
				b.failures.emplace_back(rk, ek.text(rk));
		}
		return b;
	}
	/* replicas that got everything; throws the first replica failure */
	uint32_t result() const
	{
		BcastResult b = outcome();
		if (b.error)
			throw *b.error;
		return b.done;
	}
	wt_bcast_root *get() const noexcept { return r_.get(); }

private:
	friend struct SinkRef;
	detail::Own<wt_bcast_root, wt_bcast_root_destroy> r_;
	SinkRef inner_;
	uint32_t replicas_;
};

inline SinkRef::SinkRef(const BcastRoot &r) noexcept
    : c(wt_bcast_root_sink(r.r_.get())), cxx(r.inner_.cxx)
{
}

/* A replica: drive s with what the root at o.url sends, checked against m. */
inline void bcast_receive(const wt_bcast_opts &o, const ManifestView &m, const SinkRef &s)
{
	detail::drive(
	    s, [&](wt_sink *k, wt_errbuf *e) { return wt_bcast_receive(&o, m.get(), k, e); });
}

} // namespace weights

#include "weights/weights_admin.hpp"

#endif
