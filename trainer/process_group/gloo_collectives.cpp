// The CPU collectives: Gloo over TCP between nodes, shared memory between
// the ranks of a node, on a communication thread.
//
// Gloo's collectives block their caller, so buckets go to a thread of their
// own and backward keeps computing while they travel: the overlap PyTorch's
// Reducer gets from asynchronous work handles. One thread also means one
// order: buckets are reduced in the order they were started, on every rank.
//
// A bucket's all-reduce is hierarchical when a node runs several ranks (the
// shape Horovod and NCCL use): the node's ranks sum their slots in shared
// memory, each rank a slice; the node leaders all-reduce the node sums over
// Gloo; the other ranks copy the result back. One node = no TCP at all.
#include <arpa/inet.h>
#include <netdb.h>

#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "ddp/node/netif.hpp"
#include "process_group/cpu_collectives.hpp"
#include "process_group/shm_group.hpp"

namespace ddp::train {
namespace {

// gloo::rendezvous::Store over our store. Gloo reports failures by exception.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(StoreClient& client, std::string prefix, std::chrono::milliseconds timeout)
      : client_(client), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    if (auto st = client_.set(prefix_ + key, data); !st) throw std::runtime_error(st.error());
  }
  std::vector<char> get(const std::string& key) override {
    auto value = client_.get(prefix_ + key, timeout_);
    if (!value) throw std::runtime_error(value.error());
    return std::move(value).value();
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const auto& k : keys) full.push_back(prefix_ + k);
    if (auto st = client_.wait(full, timeout); !st) throw std::runtime_error(st.error());
  }

 private:
  StoreClient& client_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

// Resolves MASTER_ADDR to an IPv4 literal (it may be a host name under torchrun).
Result<std::string> numeric_ipv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    return fail("cannot resolve MASTER_ADDR=" + host + ": " + gai_strerror(rc));
  char buf[INET_ADDRSTRLEN] = {0};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, buf, sizeof buf);
  ::freeaddrinfo(found);
  return std::string(buf);
}

// A connected Gloo full mesh and the two operations we need from it.
class GlooMesh {
 public:
  explicit GlooMesh(std::shared_ptr<gloo::Context> context) : context_(std::move(context)) {}
  void allreduce(float* data, std::size_t count) {
    gloo::AllreduceOptions opts(context_);
    opts.setOutput(data, count);
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    opts.setTag(tag_++);
    gloo::allreduce(opts);
  }
  void broadcast(float* data, std::size_t count, int root) {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(data, count);
    opts.setRoot(root);
    opts.setTag(tag_++);
    gloo::broadcast(opts);
  }
  int rank() const { return context_->rank; }
  int size() const { return context_->size; }

 private:
  std::shared_ptr<gloo::Context> context_;
  std::uint32_t tag_ = 0;  // only the communication thread uses a mesh: tags match across ranks
};

// Gloo's connectFullMesh takes the store as `Store&` in Debian 12's and 13's
// Gloo and as `std::shared_ptr<Store>&` in Debian unstable's; exactly one of
// these two compiles against a given Gloo.
template <class Context>
auto connect_full_mesh(Context& context, std::shared_ptr<gloo::rendezvous::Store>& store,
                       std::shared_ptr<gloo::transport::Device>& device)
    -> decltype(context.connectFullMesh(store, device)) {
  return context.connectFullMesh(store, device);
}
template <class Context>
auto connect_full_mesh(Context& context, std::shared_ptr<gloo::rendezvous::Store>& store,
                       std::shared_ptr<gloo::transport::Device>& device)
    -> decltype(context.connectFullMesh(*store, device)) {
  return context.connectFullMesh(*store, device);
}

Result<std::unique_ptr<GlooMesh>> connect_mesh(Session& session, const gloo::transport::tcp::attr& attr, int rank,
                                               int size, const std::string& prefix,
                                               std::chrono::milliseconds timeout) {
  try {
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    std::shared_ptr<gloo::rendezvous::Store> store =
        std::make_shared<GlooStore>(*session.store, session.key(prefix), timeout);
    connect_full_mesh(*context, store, device);
    return std::make_unique<GlooMesh>(context);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

class CpuCollectives final : public Collectives {
 public:
  CpuCollectives(std::unique_ptr<GlooMesh> world, std::unique_ptr<GlooMesh> leaders, std::unique_ptr<ShmGroup> node,
                 bool several_nodes, std::string description, std::chrono::milliseconds timeout)
      : world_(std::move(world)),
        leaders_(std::move(leaders)),
        node_(std::move(node)),
        several_nodes_(several_nodes),
        description_(std::move(description)),
        timeout_(timeout),
        thread_([this] { run(); }) {}

  ~CpuCollectives() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  int rank() const override { return world_->rank(); }
  int size() const override { return world_->size(); }
  std::string name() const override { return description_; }

  float* gradient_memory(std::size_t count) override {
    return node_ && count <= node_->slot_floats() ? node_->slot(node_->local_rank()) : nullptr;
  }

  Status broadcast(float* data, std::size_t count, int root) override {
    enqueue([this, data, count, root] { world_->broadcast(data, count, root); });
    return finish_buckets();
  }

  Status allreduce_sum(float* data, std::size_t count) override {
    enqueue([this, data, count] { world_->allreduce(data, count); });
    return finish_buckets();
  }

  void start_bucket(float* data, std::size_t count, float prescale) override {
    enqueue([this, data, count, prescale] {
      // Pre-divide, then SUM: Gloo has no AVG, and this is PyTorch's order.
      if (node_) {
        node_allreduce(data, count, prescale);  // divides inside its one pass over the slots
        return;
      }
      if (prescale != 1.0f)
        for (std::size_t i = 0; i < count; ++i) data[i] *= prescale;
      world_->allreduce(data, count);
    });
  }

  // Waits for the started buckets. If the communication thread has not
  // picked up the next one yet, this thread runs it itself (still in order:
  // only one thread at a time runs jobs). With one bucket per step, as the
  // MLP has, that saves the thread's wake-up, tens of microseconds.
  Status finish_buckets() override {
    std::unique_lock lock(mutex_);
    while (finished_ != started_) {
      if (!running_ && !queue_.empty()) {
        run_one(lock);
        continue;
      }
      done_.wait(lock);
    }
    if (!error_.empty()) return fail(error_);
    return Ok{};
  }

 private:
  void check(const Status& st) {
    if (!st) throw std::runtime_error(st.error());
  }

  // Runs the job at the head of the queue; `lock` is held on entry and exit.
  void run_one(std::unique_lock<std::mutex>& lock) {
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = !error_.empty();  // after a failure the group is unusable: drain
    running_ = true;
    lock.unlock();
    std::string failure;
    if (!skip) {
      try {
        job();
      } catch (const std::exception& e) {
        failure = std::string("all-reduce failed on rank ") + std::to_string(world_->rank()) + ": " + e.what() +
                  " (a peer rank probably died or the network failed)";
      }
    }
    lock.lock();
    running_ = false;
    if (!failure.empty() && error_.empty()) error_ = failure;
    ++finished_;
    done_.notify_all();
    wake_.notify_one();
  }

  // data lies in this rank's shared slot (gradient_memory); so does the same
  // range in every other local rank's slot.
  void node_allreduce(float* data, std::size_t count, float prescale) {
    const int me = node_->local_rank();
    const int n = node_->local_size();
    const std::size_t offset = std::size_t(data - node_->slot(me));
    check(node_->barrier(timeout_));  // every slot holds its bucket
    // Each local rank sums one slice over all slots, each term pre-divided
    // (the same arithmetic as dividing first, in one pass over memory).
    const std::size_t slice = (count + std::size_t(n) - 1) / std::size_t(n);
    const std::size_t begin = std::min(count, slice * std::size_t(me));
    const std::size_t end = std::min(count, begin + slice);
    float* leader = node_->slot(0) + offset;
    if (n == 1) {
      for (std::size_t i = begin; i < end; ++i) leader[i] *= prescale;
    } else {
      const float* second = node_->slot(1) + offset;
      for (std::size_t i = begin; i < end; ++i) leader[i] = leader[i] * prescale + second[i] * prescale;
      for (int s = 2; s < n; ++s) {
        const float* other = node_->slot(s) + offset;
        for (std::size_t i = begin; i < end; ++i) leader[i] += other[i] * prescale;
      }
    }
    if (!several_nodes_) {
      // One node: the sum is final; write it into every slot, then no rank
      // copies anything afterwards.
      for (int s = 1; s < n; ++s) std::memcpy(node_->slot(s) + offset + begin, leader + begin, (end - begin) * sizeof(float));
      check(node_->barrier(timeout_));  // every slot holds the result
      return;
    }
    check(node_->barrier(timeout_));  // the node's sum is complete in the leader's slot
    if (me == 0) leaders_->allreduce(leader, count);
    check(node_->barrier(timeout_));  // the global sum is there
    if (me != 0) std::memcpy(data, leader, count * sizeof(float));
    check(node_->barrier(timeout_));  // the leader's slot may be reused
  }

  void enqueue(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      ++started_;
      queue_.push_back(std::move(job));
    }
    wake_.notify_one();
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || (!running_ && !queue_.empty()); });
      if (queue_.empty()) return;  // stopping, nothing left
      run_one(lock);
    }
  }

  std::unique_ptr<GlooMesh> world_;
  std::unique_ptr<GlooMesh> leaders_;  // node leaders only, and only with several nodes
  std::unique_ptr<ShmGroup> node_;     // only with several ranks on this node
  bool several_nodes_;                 // the same on every rank: the barrier count depends on it
  std::string description_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<std::function<void()>> queue_;
  std::size_t started_ = 0;
  std::size_t finished_ = 0;
  std::string error_;
  bool running_ = false;  // a job is running (on either thread)
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

class LocalCollectives final : public Collectives {
 public:
  explicit LocalCollectives(Ops& ops) : ops_(ops) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "local (one process)"; }
  Status broadcast(float*, std::size_t, int) override { return Ok{}; }
  Status allreduce_sum(float*, std::size_t) override { return Ok{}; }
  void start_bucket(float* data, std::size_t count, float prescale) override {
    if (prescale != 1.0f) ops_.scale(data, prescale, count);
  }
  Status finish_buckets() override { return Ok{}; }

 private:
  Ops& ops_;
};

}  // namespace

Result<std::unique_ptr<Collectives>> make_cpu_collectives(Session& session, std::size_t gradient_floats,
                                                          bool use_shared_memory, std::chrono::milliseconds timeout) {
  const WorkerIdentity& id = session.id;
  gloo::transport::tcp::attr attr;
  std::string where;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    attr.iface = iface;
    where = "interface " + attr.iface + " (GLOO_SOCKET_IFNAME)";
  } else {
    auto master = numeric_ipv4(id.master_addr);
    if (!master) return fail(master.error());
    auto route = route_to(*master);
    if (!route) return fail(route.error());
    attr.hostname = route->source_address;
    where = route->source_address + " on " + route->interface + " (the route to MASTER_ADDR)";
  }
  const auto mesh_error = [&](const std::string& what, const std::string& e) {
    return fail("rank " + std::to_string(id.rank) + ": connecting the Gloo " + what + " over " + where +
                " failed: " + e + " (set GLOO_SOCKET_IFNAME to an interface every node can reach if this one is "
                "wrong)");
  };
  auto world = connect_mesh(session, attr, id.rank, id.world_size, "gloo/", timeout);
  if (!world) return mesh_error("mesh", world.error());

  // The node's ranks share memory when the launcher says who they are.
  // Hierarchical when some node runs several ranks. The choice must be the
  // same on every rank (it sets the barrier count), so it rests on job-wide
  // facts only; a node with a single rank joins as a group of one.
  const bool grouped = use_shared_memory && id.group_rank >= 0 && id.group_world_size > 0 &&
                       id.world_size > id.group_world_size;
  std::unique_ptr<ShmGroup> node;
  std::unique_ptr<GlooMesh> leaders;
  std::string shape = "gloo tcp over " + where;
  if (grouped) {
    auto g = ShmGroup::join(session, id.group_rank, id.local_rank, id.local_world_size, gradient_floats, timeout);
    if (!g) return fail("rank " + std::to_string(id.rank) + ": " + g.error() + " (--no-shm turns this path off)");
    node = std::move(g).value();
    if (id.group_world_size > 1 && id.local_rank == 0) {
      auto l = connect_mesh(session, attr, id.group_rank, id.group_world_size, "gloo-leaders/", timeout);
      if (!l) return mesh_error("mesh of node leaders", l.error());
      leaders = std::move(l).value();
    }
    shape = std::to_string(id.local_world_size) + " ranks in shared memory" +
            (id.group_world_size > 1 ? ", " + std::to_string(id.group_world_size) + " nodes over gloo tcp (" +
                                           where + ")"
                                     : " (one node: no TCP)");
  }
  return std::unique_ptr<Collectives>(
      std::make_unique<CpuCollectives>(std::move(world).value(), std::move(leaders), std::move(node),
                                       id.group_world_size > 1,
                                       std::to_string(id.world_size) + " ranks, " + shape, timeout));
}

std::unique_ptr<Collectives> make_local_collectives(Ops& ops) { return std::make_unique<LocalCollectives>(ops); }

}  // namespace ddp::train
