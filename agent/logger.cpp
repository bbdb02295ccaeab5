#include "logger.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <string>

namespace ddp::agent {

namespace {

class SinkLogger : public spdlog::sinks::base_sink<std::mutex> {
 public:
  SinkLogger(std::shared_ptr<Sink> sink, int fd) : sink_(std::move(sink)), fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t text;
    formatter_->format(msg, text);
    sink_->write(fd_, std::string(text.data(), text.size()));
  }
  void flush_() override {}

 private:
  std::shared_ptr<Sink> sink_;
  int fd_;
};

}  // namespace

std::shared_ptr<Sink> log_through_sink(int fd) {
  auto sink = std::make_shared<Sink>();
  auto logger = std::make_shared<spdlog::logger>("ddp-agent", std::make_shared<SinkLogger>(sink, fd));
  logger->set_pattern("ddp-agent: %l: %v");
  spdlog::set_default_logger(logger);
  return sink;
}

}  // namespace ddp::agent
