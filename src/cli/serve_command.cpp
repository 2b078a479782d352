#include "cli/serve_command.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

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
// The reports /run/ID keeps: the most recent ones, within a memory bound (a 2048-token run's
// report is ~250 MB).
constexpr std::size_t kKeptReports = 32;
constexpr std::size_t kKeptReportBytes = std::size_t{512} << 20;
// Threads answering connections: the runs that may wait, the one running, and as many again for
// idle keep-alive connections and quick requests (health, tokenize, the page).
constexpr std::size_t kSpareConnectionThreads = 16;
// The server's paths, and what each takes.
const std::map<std::string, std::string> kPaths = {{"/", "GET"},           {"/api/health", "GET"}, {"/api/run", "POST"},
                                                   {"/api/tokenize", "POST"}};

// One log field in UTF-8 on one line, whatever bytes a request put in it.
std::string loggable(const std::string& text) {
  std::string line = encode_utf8(decode_utf8(text));
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return line;
}

// What is wrong with a request's framing before its body is read, or "": a POST needs one
// Content-Length of digits (no chunked body, whose size httplib's limit does not bound) and a JSON
// body; a request from a page must come from this server's own page (Origin = http://Host), and on
// the loopback interface every request must name it (`own_hosts`: Host), so that no other site,
// nor a DNS name rebound to 127.0.0.1, can use the API through a browser.
std::pair<int, std::string> framing_fault(const httplib::Request& request, const std::vector<std::string>& own_hosts) {
  const std::string host = request.get_header_value("Host");
  if (!own_hosts.empty() && std::find(own_hosts.begin(), own_hosts.end(), host) == own_hosts.end())
    return {403, "request: Host \"" + host + "\" is not this server's address (" + own_hosts.front() + ")"};
  if (request.has_header("Origin") && request.get_header_value("Origin") != "http://" + host)
    return {403, "request: Origin " + request.get_header_value("Origin") + " is not this server's page (http://" + host + ")"};
  if (request.method != "POST") return {0, ""};
  if (request.has_header("Transfer-Encoding"))
    return {411, "request: send the body with a Content-Length, not Transfer-Encoding: " + request.get_header_value("Transfer-Encoding")};
  const std::size_t lengths = request.get_header_value_count("Content-Length");
  if (lengths == 0) return {411, "request: a POST needs a Content-Length and a JSON body"};
  for (std::size_t i = 0; i < lengths; ++i) {
    const std::string length = request.get_header_value("Content-Length", i);
    if (length.empty() || length.size() > 18 || length.find_first_not_of("0123456789") != std::string::npos ||
        (i > 0 && length != request.get_header_value("Content-Length", 0)))
      return {400, "request: Content-Length must be one whole number of bytes, got \"" + length + "\""};
  }
  const std::string type = request.get_header_value("Content-Type");
  if (type.rfind("application/json", 0) != 0)
    return {415, "request: send the body as Content-Type: application/json, got \"" + type + "\""};
  return {0, ""};
}

// Does the Accept header prefer application/octet-stream (safetensors) to JSON? Types are
// compared without case; q=0 refuses a type; absent types count as q=0.
bool wants_safetensors(const std::string& accept) {
  double octet = 0, json = 0;
  std::size_t start = 0;
  while (start <= accept.size()) {
    const std::size_t comma = std::min(accept.find(',', start), accept.size());
    std::string item = accept.substr(start, comma - start);
    for (char& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t semicolon = item.find(';');
    std::string type = item.substr(0, semicolon);
    type.erase(0, type.find_first_not_of(" \t"));
    type.erase(type.find_last_not_of(" \t") + 1);
    double q = 1;
    if (const std::size_t at = item.find("q=", semicolon == std::string::npos ? item.size() : semicolon); at != std::string::npos)
      q = std::strtod(item.c_str() + at + 2, nullptr);
    if (type == "application/octet-stream") octet = std::max(octet, q);
    if (type == "application/json" || type == "application/*" || type == "*/*") json = std::max(json, type == "application/json" ? q : q / 2);
    start = comma + 1;
  }
  return octet > 0 && octet >= json;
}

void answer_error(httplib::Response& response, int status, const std::string& message) {
  response.status = status;
  // A message may quote the request's bytes, which need not be UTF-8: replaced, not thrown on.
  response.set_content(nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                       "application/json");
}

bool loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

// The recent runs' report pages, by run number: at most kKeptReports of them and kKeptReportBytes
// together (the newest is always kept).
class ReportStore {
 public:
  long add(std::string html) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const long id = ++last_;
    bytes_ += html.size();
    pages_[id] = std::move(html);
    order_.push_back(id);
    while (order_.size() > 1 && (order_.size() > kKeptReports || bytes_ > kKeptReportBytes)) {
      bytes_ -= pages_[order_.front()].size();
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
  std::size_t bytes_ = 0;
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
    err << "attnviz serve: " << loggable(request.method) << " " << loggable(request.path) << " " << status << " "
        << loggable(what) << " " << time_text << "\n";
    err.flush();
  };

  httplib::Server server;
  server.new_task_queue = [&options] {
    return new httplib::ThreadPool(static_cast<std::size_t>(options.queue) + 2 + kSpareConnectionThreads);
  };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_keep_alive_timeout(2);
  server.set_read_timeout(5);
  // SO_REUSEADDR alone (httplib's default adds SO_REUSEPORT): a second server on a port in use is
  // refused instead of sharing it.
  server.set_socket_options([](socket_t socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}});

  // httplib's own answers (an unknown path, a body over the limit, a malformed request) come
  // with no body: they get the API's {"error"} and a log line like every other answer.
  server.set_error_handler([&](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    const auto known = kPaths.find(request.path);
    const bool run_path = request.path.rfind("/run/", 0) == 0;
    if (response.status == 404 && (known != kPaths.end() || run_path)) {
      response.status = 405;
      response.set_header("Allow", known != kPaths.end() ? known->second : "GET");
    }
    const std::string message =
        response.status == 405 ? request.method + " " + request.path + ": not allowed (" + response.get_header_value("Allow") + " only)"
        : response.status == 404 ? "no such path: " + request.method + " " + request.path +
                                       " (GET /, GET /run/ID, GET /api/health, POST /api/run, POST /api/tokenize)"
        : response.status == 413 ? std::string("request: the body is too large: at most 1 MiB")
        : response.status == 414 ? std::string("request: the address is too long")
                                 : "request: a malformed HTTP request (HTTP " + std::to_string(response.status) + ")";
    answer_error(response, response.status, message);
    log(request, response.status, message, 0);
  });
  const std::string shown_host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::vector<std::string> own_hosts;  // filled once the port is known
  server.set_pre_routing_handler([&](const httplib::Request& request, httplib::Response& response) {
    const auto [status, message] = framing_fault(request, own_hosts);
    if (status == 0) return httplib::Server::HandlerResponse::Unhandled;
    answer_error(response, status, message);
    response.set_header("Connection", "close");
    log(request, status, message, 0);
    return httplib::Server::HandlerResponse::Handled;
  });

  const std::string page = serve_page(model_name);
  server.Get("/", [&](const httplib::Request& request, httplib::Response& response) {
    response.set_content(page, "text/html; charset=utf-8");
    log(request, 200, "the page", 0);
  });
  server.Get("/api/health", [&](const httplib::Request& request, httplib::Response& response) {
    response.set_content(nlohmann::ordered_json{{"status", "ok"}, {"model", model_name}, {"waiting", waiting.load()}}.dump(),
                         "application/json");
    log(request, 200, "health", 0);
  });
  server.Get(R"(/run/(\d{1,18}))", [&](const httplib::Request& request, httplib::Response& response) {
    std::string html;
    if (!reports.find(std::stol(request.matches[1]), html)) {
      const std::string message = "run " + std::string(request.matches[1]) + " is not kept (the server keeps the last " +
                                  std::to_string(kKeptReports) + " runs' reports, at most 512 MiB of them)";
      answer_error(response, 404, message);
      return log(request, 404, message, 0);
    }
    response.set_content(html, "text/html; charset=utf-8");
    log(request, 200, "report", 0);
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
      // As `tokenize --json` prints it.
      response.set_content(nlohmann::ordered_json{{"tokens", pieces}, {"token_ids", ids}, {"token_texts", texts}}.dump() + "\n",
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
    // ?report=1 (the page's) makes the run's report, kept at /run/ID, and answers {"run", "tokens"}
    // instead of the dump the page would throw away.
    const bool with_report = request.get_param_value("report") == "1";
    Options asked;
    try {
      for (const auto& [name, value] : request.params)
        if (name != "report" || (value != "0" && value != "1"))
          throw UsageError::bad_option("request", "unknown query " + name + "=" + value + " (/api/run takes report=1 or report=0)");
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
      answer_error(response, 503, options.queue == 0 ? std::string("busy: a run is in progress and --queue 0 lets none wait; try again")
                                                     : "busy: " + std::to_string(options.queue) + " runs are waiting already; try again");
      return log(request, 503, "queue full", seconds());
    }
    int status = 200;
    std::string what;
    try {
      // Accept: application/octet-stream asks for the dump as safetensors (no report kept).
      if (!with_report && wants_safetensors(request.get_header_value("Accept"))) {
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
      response.set_header("X-Attnviz-Tokens", std::to_string(served.tokens));
      if (with_report) {
        const long id = reports.add(std::move(served.report_html));
        response.set_header("X-Attnviz-Run", std::to_string(id));
        what += ", run " + std::to_string(id);
        response.set_content(nlohmann::ordered_json{{"run", id}, {"tokens", served.tokens}}.dump(), "application/json");
      } else {
        response.set_content(std::move(served.dump_json), "application/json");
      }
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
    throw UsageError::bad_option("--host", "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                                               " (--port in use, or --host not an address of this machine)");
  if (loopback(options.host))
    for (const std::string& name : {shown_host, std::string("localhost"), std::string("127.0.0.1"), std::string("[::1]")})
      own_hosts.push_back(name + ":" + std::to_string(port));
  if (!loopback(options.host))
    warnings.push_back("--host " + options.host + ": the API has no authentication; anyone who reaches this address can run the model");
  for (const std::string& warning : warnings) err << "attnviz: warning: " << warning << "\n";
  warnings.clear();
  out << "attnviz serve: http://" << shown_host << ":" << port << "/ (" << model_name << "; at most " << options.max_tokens << " tokens a run; Ctrl-C stops)" << std::endl;
  signals.stop(server);
  server.listen_after_bind();
  signals.finish();
  out << "attnviz serve: stopped" << std::endl;
}

}  // namespace attnviz
