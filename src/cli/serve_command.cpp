#include "cli/serve_command.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "cli/model_job.hpp"
#include "cli/serve_page.hpp"
#include "cli/serve_request.hpp"
#include "cli/serve_run.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/vocabulary.hpp"

// Last: httplib.h brings <resolv.h>, whose `_res` macro would rewrite Eigen's parameters of that
// name in any Eigen header included after it.
#include <httplib.h>

namespace attnviz {
namespace {

// Bodies past this are refused before they are read whole (413, httplib's own answer).
constexpr std::size_t kMaxBodyBytes = std::size_t{1} << 20;
// The reports /run/ID keeps: the most recent ones.
constexpr std::size_t kKeptReports = 32;

void answer_error(httplib::Response& response, int status, const std::string& message) {
  response.status = status;
  // A message may quote the request's bytes, which need not be UTF-8: replaced, not thrown on.
  response.set_content(nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                       "application/json");
}

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

// The recent runs' report pages, by run number.
class ReportStore {
 public:
  long add(std::string html) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const long id = ++last_;
    pages_[id] = std::move(html);
    order_.push_back(id);
    if (order_.size() > kKeptReports) {
      pages_.erase(order_.front());
      order_.pop_front();
    }
    return id;
  }
  bool find(long id, std::string& html) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = pages_.find(id);
    if (it == pages_.end()) return false;
    html = it->second;
    return true;
  }

 private:
  mutable std::mutex mutex_;
  long last_ = 0;
  std::map<long, std::string> pages_;
  std::deque<long> order_;
};

// SIGINT and SIGTERM stop the server. They are blocked from the start, before the model loads,
// so that every thread made since (OpenMP's workers, the server's) leaves them to one waiting
// thread, which asks the server to stop; stopping lets the requests in flight finish.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  }
  ~StopSignals() {
    finish();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// No signal stops the server any more (call it before the server goes).
  void finish() {
    done_ = true;
    if (waiter_.joinable()) waiter_.join();
  }

  /// From now on a signal stops `server`.
  void stop(httplib::Server& server) {
    waiter_ = std::thread([this, &server] {
      const timespec tick{0, 100 * 1000 * 1000};
      while (!done_) {
        if (sigtimedwait(&signals_, nullptr, &tick) > 0) {
          server.stop();
          return;
        }
      }
    });
  }

 private:
  sigset_t signals_{}, previous_{};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace

void run_serve(const Options& options, std::ostream& out, std::ostream& err, std::vector<std::string>& warnings) {
  if (options.model.empty()) throw UsageError::bad_option("--model", "serve needs the model to serve");
  StopSignals signals;
  const DecoderSession session(options, true);
  const Vocabulary* vocabulary = session.vocabulary();
  const std::string model_name = session.summary().name;
  std::mutex model_mutex, log_mutex;
  std::atomic<int> waiting{0};
  ReportStore reports;
  const auto log = [&](const httplib::Request& request, int status, const std::string& what, double seconds) {
    const std::lock_guard<std::mutex> lock(log_mutex);
    char time_text[32];
    std::snprintf(time_text, sizeof time_text, "%.3f s", seconds);
    // One line each, in UTF-8, whatever bytes a request's fault quotes.
    std::string line = encode_utf8(decode_utf8(what));
    for (char& c : line)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    err << "attnviz serve: " << request.method << " " << request.path << " " << status << " " << line << " " << time_text << "\n";
    err.flush();
  };

  httplib::Server server;
  server.new_task_queue = [&options] { return new httplib::ThreadPool(static_cast<std::size_t>(options.queue) + 2); };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}});

  // httplib's own answers (an unknown path, a body over the limit, a malformed request) come
  // with no body: they get the API's {"error"} and a log line like every other answer.
  server.set_error_handler([&](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    const std::string message =
        response.status == 404 ? "no such path: " + request.method + " " + request.path +
                                     " (GET /, GET /run/ID, GET /api/health, POST /api/run, POST /api/tokenize)"
        : response.status == 413 ? std::string("request: the body is too large: at most 1 MiB as application/json (8 KiB "
                                               "as a form)")
                                 : "request: refused (HTTP " + std::to_string(response.status) + ")";
    answer_error(response, response.status, message);
    log(request, response.status, message, 0);
  });

  const std::string page = serve_page(model_name);
  server.Get("/", [&](const httplib::Request&, httplib::Response& response) {
    response.set_content(page, "text/html; charset=utf-8");
  });
  server.Get("/api/health", [&](const httplib::Request&, httplib::Response& response) {
    response.set_content(nlohmann::json{{"status", "ok"}, {"model", model_name}, {"waiting", waiting.load()}}.dump(),
                         "application/json");
  });
  server.Get(R"(/run/(\d{1,18}))", [&](const httplib::Request& request, httplib::Response& response) {
    std::string html;
    if (!reports.find(std::stol(request.matches[1]), html))
      return answer_error(response, 404, "run " + std::string(request.matches[1]) + " is not kept (the server keeps the last " +
                                             std::to_string(kKeptReports) + " runs)");
    response.set_content(html, "text/html; charset=utf-8");
  });
  server.Post("/api/tokenize", [&](const httplib::Request& request, httplib::Response& response) {
    const auto started = std::chrono::steady_clock::now();
    try {
      const Options asked = serve_request(options, request.body, true);
      if (!vocabulary) throw InputError::inconsistent(options.model, "the model has no tokenizer");
      const std::vector<std::int32_t> ids = tokenize(*vocabulary, *asked.text, !options.no_bos, !options.no_parse_special);
      nlohmann::json pieces = nlohmann::json::array(), texts = nlohmann::json::array();
      for (const std::int32_t id : ids) {
        pieces.push_back(vocabulary->pieces[static_cast<std::size_t>(id)]);
        texts.push_back(token_display_text(*vocabulary, id));
      }
      response.set_content(nlohmann::json{{"tokens", pieces}, {"token_ids", ids}, {"token_texts", texts}}.dump(),
                           "application/json");
      log(request, 200, std::to_string(ids.size()) + " tokens",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } catch (const Error& e) {
      answer_error(response, 400, e.what());
      log(request, 400, e.what(), 0);
    }
  });
  server.Post("/api/run", [&](const httplib::Request& request, httplib::Response& response) {
    const auto started = std::chrono::steady_clock::now();
    const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
    // ?report=1 (the page's) also makes the run's report, kept at /run/ID.
    const bool with_report = request.get_param_value("report") == "1";
    Options asked;
    try {
      asked = serve_request(options, request.body, false);
    } catch (const Error& e) {
      answer_error(response, 400, e.what());
      return log(request, 400, e.what(), seconds());
    }
    // The limit counts the text's tokens (as the model's tokenizer splits them) and those to generate.
    const long given = asked.token_ids ? static_cast<long>(asked.token_ids->size())
                       : vocabulary    ? static_cast<long>(tokenize(*vocabulary, *asked.text, !asked.no_bos,
                                                                    !asked.no_parse_special).size())
                                       : 0;
    const long total = given + std::max(asked.generate, 0);
    if (total > options.max_tokens) {
      const std::string message = "--max-tokens: the run has " + std::to_string(total) + " tokens (" + std::to_string(given) +
                                  " given, " + std::to_string(std::max(asked.generate, 0)) +
                                  " to generate), over the server's limit of " + std::to_string(options.max_tokens);
      answer_error(response, 413, message);
      return log(request, 413, message, seconds());
    }
    if (waiting.fetch_add(1) > options.queue) {
      waiting.fetch_sub(1);
      response.set_header("Retry-After", "1");
      answer_error(response, 503, "busy: " + std::to_string(options.queue) + " runs are waiting already; try again");
      return log(request, 503, "queue full", seconds());
    }
    int status = 200;
    std::string what;
    try {
      // Accept: application/octet-stream asks for the dump as safetensors (no report kept).
      if (request.get_header_value("Accept").find("application/octet-stream") != std::string::npos) {
        std::vector<std::string> run_warnings;
        std::string bytes;
        {
          const std::lock_guard<std::mutex> lock(model_mutex);
          bytes = serve_safetensors(session, asked, run_warnings);
        }
        what = std::to_string(bytes.size()) + " bytes of safetensors";
        response.set_content(std::move(bytes), "application/octet-stream");
        waiting.fetch_sub(1);
        return log(request, 200, what, seconds());
      }
      ServedRun served;
      {
        const std::lock_guard<std::mutex> lock(model_mutex);
        served = serve_run(session, asked, with_report);
      }
      what = std::to_string(served.tokens) + " tokens";
      if (with_report) {
        const long id = reports.add(std::move(served.report_html));
        response.set_header("X-Attnviz-Run", std::to_string(id));
        what += ", run " + std::to_string(id);
      }
      response.set_header("X-Attnviz-Tokens", std::to_string(served.tokens));
      response.set_content(std::move(served.dump_json), "application/json");
    } catch (const LimitError& e) {
      status = 413;
      what = e.what();
    } catch (const Error& e) {
      status = 400;
      what = e.what();
    } catch (const std::bad_alloc&) {
      status = 413;
      what = "out of memory (a shorter text, or fewer layers)";
    } catch (const std::exception& e) {
      status = 500;
      what = std::string("internal error: ") + e.what() + " (please report this)";
    }
    waiting.fetch_sub(1);
    if (status != 200) answer_error(response, status, what);
    log(request, status, what, seconds());
  });

  const bool any_port = options.port == 0;
  const int port = any_port ? server.bind_to_any_port(options.host) : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0)
    throw UsageError::bad_option("--port", "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                                               " (in use, or not an address of this machine)");
  if (!loopback(options.host))
    warnings.push_back("--host " + options.host + ": the API has no authentication; anyone who reaches this address can run the model");
  for (const std::string& warning : warnings) err << "attnviz: warning: " << warning << "\n";
  warnings.clear();
  out << "attnviz serve: http://" << (options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host)
      << ":" << port << "/ (" << model_name << "; at most " << options.max_tokens << " tokens a run; Ctrl-C stops)" << std::endl;
  signals.stop(server);
  server.listen_after_bind();
  signals.finish();
  out << "attnviz serve: stopped" << std::endl;
}

}  // namespace attnviz
