// How node 0's coordinator takes a node's end: lost (its connection ended,
// its heartbeats stopped), unhealthy (its HealthCheck failed), or stopped by
// Slurm (its agent said SIGNALLED first). A lost node's place goes to a
// spare, or the run shrinks or ends (plan/roster.hpp); Slurm's stop ends the
// run.
#include <spdlog/spdlog.h>

#include "rendezvous/coordinator.hpp"

namespace ddp::agent {

namespace {

// What Slurm's stop does to a step before every agent hears of it: its
// workers killed from outside (proctrack signals every process of the
// step), its nodes' connections ended.
bool stopped_by_signal(const Failure& f) {
  const FailureClass cls = class_of(f);
  return cls == FailureClass::NodeLost || cls == FailureClass::Killed;
}

}  // namespace

void Coordinator::on_close(std::uint32_t node, std::uint64_t peer, const std::string& why) {
  Node& n = nodes_[node];
  if (n.peer != peer || n.finished || phase_ == Phase::Done) return;
  if (!n.signalled) return node_lost(node, "its agent's connection ended (" + why + ")");
  // Slurm's stop reached this node first: its workers are stopped, its agent gone.
  n.stopped_attempt = attempt_;
  if (phase_ == Phase::Stopping) check_stopped();
}

// A node's agent got a terminating signal: Slurm is stopping the job or the
// step (scancel, preemption, a time limit, srun interrupted), and every node
// gets one within moments, in no set order. Whichever node hears first, the
// run ends with Slurm's stop (no restart, no blame), and that node's end is
// not a loss. Stopping already, a consequence of the stop (a worker killed by
// a signal, a lost node) gives way to it; any other failure stays the cause.
void Coordinator::on_signalled(std::uint32_t node, const rdzv::Signalled& signalled) {
  Node& n = nodes_[node];
  if (n.signalled || n.lost || phase_ == Phase::Done) return;
  n.signalled = int(signalled.signal);
  can_go_on_ = false;
  Failure stop = node_failure(node, FailureKind::AgentSignalled, "");
  stop.signal = n.signalled;
  stop.exit_code = 128 + n.signalled;
  if (phase_ == Phase::Rendezvous || phase_ == Phase::Preflight) return finish(root_cause(std::move(stop)));
  if (phase_ == Phase::Running) return begin_stop(root_cause(std::move(stop)));
  if (cause_ && !stopped_by_signal(cause_->failure)) return;
  RootCause cause = root_cause(std::move(stop));
  if (cause_) cause.related = without_output(cause_->failure);
  cause_ = std::move(cause);
}

// A node stopped answering (heartbeats, or its connection ended), or its
// HealthCheck found it unhealthy. Its place goes to a spare, or its group is
// dropped (--ddp-min-nodes), and every worker restarts; a lost spare only
// costs a spare (roster.hpp). The node is never used again: its connection is
// closed and a new one from it refused.
void Coordinator::node_lost(std::uint32_t node, const std::string& why, bool unhealthy) {
  Node& n = nodes_[node];
  if (n.lost) return;
  n.lost = true;
  Failure loss = node_failure(node, unhealthy ? FailureKind::NodeUnhealthy : FailureKind::NodeLost, why);
  if (unhealthy && !n.slurm_node.empty()) taken_out_.push_back({n.slurm_node, why});
  if (phase_ == Phase::Rendezvous) return finish(root_cause(std::move(loss)));
  if (gate_.serves(n.peer, node)) {
    // An unhealthy node's agent still listens: BYE lets it end well (its
    // workers are stopped); a lost one's connection is closed. Either may
    // close the connection at once and end the peer.
    gate_.mark_closing(n.peer);
    if (!unhealthy)
      gate_.close_peer(n.peer, "node lost");
    else if (node != 0)
      gate_.send(n.peer, rdzv::Bye{}.to_message());
  }
  if (phase_ == Phase::Done) return;
  RootCause cause = root_cause(loss);
  // What ran the health check: this node's own first failure of the attempt.
  if (unhealthy && n.failure) cause.related = without_output(*n.failure);
  if (node == 0) {  // its agent hosts this coordinator, and MASTER_ADDR is its address
    can_go_on_ = false;
    cause.failure.consequence = "node 0 cannot be replaced (it hosts the rendezvous and MASTER_ADDR)";
  } else {
    const auto change = lose_node(*roster_, node, config_.min_nodes, [this](std::uint32_t i) { return node_name(i); });
    if (change.kind == RosterChange::Kind::Unused) {
      spdlog::warn("rendezvous: {}", change.text);  // a spare: no worker was there
      return;
    }
    cause.failure.consequence = change.text;
    changes_.push_back(first_line(cause.failure, cause.attempts));
    roster_changed_ = true;
    if (change.kind == RosterChange::Kind::CannotGoOn) can_go_on_ = false;
    // Stopping already: the workers that failed first most likely failed
    // because of this loss (a peer gone mid-collective); the loss is the cause.
    if (!unhealthy && cause_) cause.related = without_output(cause_->failure);
  }
  if (phase_ == Phase::Running) return begin_stop(std::move(cause));
  if (phase_ == Phase::Preflight) {  // no worker runs yet: the checks go on without it, or the job ends
    if (!can_go_on_) return finish(std::move(cause));
    return spdlog::warn("rendezvous: {}", changes_.back());
  }
  cause_ = std::move(cause);
  check_stopped();
}

}  // namespace ddp::agent
