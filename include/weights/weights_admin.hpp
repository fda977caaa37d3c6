/*
 * weights_admin.hpp — the admin side of libweights for C++17 (part of
 * weights.hpp, which includes it; including it alone includes weights.hpp):
 * model lists, cache admin (stats, warm, evict, verify, reclaim) and
 * registration, each one C call (client.h) with its rules and messages.
 *
 *     weights::Admin a(client);                       // borrows the client
 *     weights::AdminResult r = a.warm("llama-8b", layout);
 *     for (const weights::ModelInfo &m : a.models()) ...
 *
 * Errors are thrown as weights::Error. Results are copied out of the C
 * structs (which are freed before the call returns): nothing to release.
 */
#ifndef WEIGHTS_WEIGHTS_ADMIN_HPP
#define WEIGHTS_WEIGHTS_ADMIN_HPP

#include "weights/weights.hpp"

namespace weights
{

/* wt_admin_result, owned (text copied). */
struct AdminResult {
	std::string text; /* the server's human-readable result */
	uint64_t bytes = 0, shards = 0, chunks = 0;
	uint64_t bad = 0; /* verify: damaged chunks; evict: shards left (busy) */
	uint64_t disk_bytes = 0, disk_before = 0, rewritten = 0; /* stats, reclaim */
};

/* wt_model_info, owned. */
struct ModelInfo {
	std::string name, uri, revision, architecture;
	uint64_t checkpoint_bytes = 0;
	uint32_t n_tensors = 0;
	bool available = false; /* false: error says why the folder failed validation */
	std::string error;
	std::string source;          /* "folder", "config", "registered"; "" from an older server */
	std::string config_override; /* canonical JSON; "" none (or a weightd before 1.10) */
};

/*
 * Admin calls on the first reachable endpoint of a Client (borrowed: it must
 * outlive the Admin). Any thread, like the Client. For run(): model "" and
 * layout nullptr send none (the server says which op needs which).
 */
class Admin
{
public:
	explicit Admin(const Client &c) noexcept : c_(c.get()) {}

	AdminResult run(wt_admin_op op, const std::string &model = "",
	                const Layout *layout = nullptr) const
	{
		return take([&](wt_admin_result *r, wt_errbuf *e) {
			return wt_client_admin(c_, op, model.empty() ? nullptr : model.c_str(),
			                       layout != nullptr ? layout->get() : nullptr, r, e);
		});
	}
	AdminResult stats() const { return run(WT_ADMIN_STATS); }
	/* produce every rank of model's layout into the server's cache */
	AdminResult warm(const std::string &model, const Layout &layout) const
	{
		return run(WT_ADMIN_WARM, model, &layout);
	}
	/* drop model's cached shards of every layout ("" = every model's);
	 * result.bad counts those left because a reader has them open */
	AdminResult evict(const std::string &model = "") const
	{
		return run(WT_ADMIN_EVICT, model);
	}
	/* re-hash the whole cache; result.bad counts the damaged chunks */
	AdminResult verify() const { return run(WT_ADMIN_VERIFY); }
	/* give back disk space held by dead chunks */
	AdminResult reclaim() const { return run(WT_ADMIN_RECLAIM); }
	/* model -> uri (file:///dir, s3://, http(s)://); returns when the server
	 * opened it (result.bytes = checkpoint bytes). Named so: register is a
	 * C++ keyword. */
	AdminResult register_model(const std::string &model, const std::string &uri) const
	{
		return take([&](wt_admin_result *r, wt_errbuf *e) {
			return wt_client_register(c_, model.c_str(), uri.c_str(), r, e);
		});
	}
	/* How far the server's open of a model being registered got (bytes read
	 * for its revision, of total; total 0 until known): true to go on
	 * waiting, false to stop (wt_client_register_progress). */
	using RegisterProgress = std::function<bool(uint64_t read, uint64_t total)>;
	/* register_model, with progress called about once a second while the
	 * server opens the model (not at all by a server older than 1.4). When
	 * it returns false the call throws Error WT_ECANCELED; when it throws,
	 * that exception is rethrown as itself (it never crosses the C
	 * library). Either way the registration goes on in the server. */
	AdminResult register_model(const std::string &model, const std::string &uri,
	                           const RegisterProgress &progress) const
	{
		struct Hook {
			const RegisterProgress *fn;
			std::exception_ptr exc;
			static int call(void *ctx, uint64_t read, uint64_t total) noexcept
			{
				Hook *h = static_cast<Hook *>(ctx);
				try {
					return (*h->fn)(read, total) ? 0 : 1;
				} catch (...) {
					h->exc = std::current_exception();
					return 1;
				}
			}
		} hook{&progress, nullptr};
		wt_register_progress_fn fn = progress ? &Hook::call : nullptr;
		try {
			return take([&](wt_admin_result *r, wt_errbuf *e) {
				return wt_client_register_progress(c_, model.c_str(), uri.c_str(),
				                                   fn, &hook, r, e);
			});
		} catch (const Error &) {
			if (hook.exc)
				std::rethrow_exception(hook.exc);
			throw;
		}
	}
	/* register_model under a configuration override (libweights 1.9,
	 * wt_client_register_override): one JSON object merged over the
	 * checkpoint's config.json, e.g. {"architectures": ["DeepSeekMTPModel"]}. */
	AdminResult register_model_override(const std::string &model, const std::string &uri,
	                                    const std::string &config_override) const
	{
		return take([&](wt_admin_result *r, wt_errbuf *e) {
			return wt_client_register_override(c_, model.c_str(), uri.c_str(),
			                                   config_override.c_str(), nullptr,
			                                   nullptr, r, e);
		});
	}
	AdminResult unregister(const std::string &model) const
	{
		return take([&](wt_admin_result *r, wt_errbuf *e) {
			return wt_client_unregister(c_, model.c_str(), r, e);
		});
	}
	std::vector<ModelInfo> models() const
	{
		wt_model_info *list = nullptr;
		size_t n = 0;
		detail::call(wt_client_list_models, c_, &list, &n);
		std::unique_ptr<wt_model_info, Free> own(list, Free{n});
		std::vector<ModelInfo> out;
		out.reserve(n);
		for (size_t i = 0; i < n; i++) {
			const wt_model_info &m = list[i];
			out.push_back(ModelInfo{m.name, m.uri, m.revision, m.architecture,
			                        m.checkpoint_bytes, m.n_tensors, m.available != 0,
			                        m.error, m.source,
			                        wt_model_list_override(list, n, i)});
		}
		return out;
	}

private:
	struct Free {
		size_t n;
		void operator()(wt_model_info *l) const noexcept { wt_model_list_free(l, n); }
	};
	/* f(result, errbuf): the result copied out and cleared, or thrown */
	template <class F> static AdminResult take(F &&f)
	{
		wt_admin_result r{};
		detail::Err e;
		e.check(f(&r, &e.e));
		std::unique_ptr<wt_admin_result, void (*)(wt_admin_result *)> own(
		    &r, wt_admin_result_clear);
		return AdminResult{r.text != nullptr ? r.text : "",
		                   r.bytes,
		                   r.shards,
		                   r.chunks,
		                   r.bad,
		                   r.disk_bytes,
		                   r.disk_before,
		                   r.rewritten};
	}
	wt_client *c_;
};

} // namespace weights

#endif
