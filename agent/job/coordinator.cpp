#include "job/coordinator.hpp"

#include <spdlog/spdlog.h>

#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"
#include "job/failure_text.hpp"
#include "rendezvous/heartbeat.hpp"

namespace ddp::agent {

CoordinatorSettings CoordinatorSettings::for_plan(const NodePlan& plan, std::string secret, bool standalone,
                                                  const std::string& host) {
  CoordinatorSettings s;
  s.secret = std::move(secret);
  s.master_addr = plan.master_addr;
  // MasterInterface (e.g. IPoIB): the workers meet on node 0's address there,
  // which only node 0 knows; START carries it to everyone.
  if (!plan.master_interface.empty()) {
    if (auto addr = interface_address(plan.master_interface))
      s.master_addr = *addr;
    else  // said to every node once they have all arrived, not left to their timeouts
      s.setup_error = "MasterInterface=" + plan.master_interface + " from the site config: node 0 (" + host +
                      "): " + addr.error() + "; fix the site config or the node's network";
  }
  if (standalone && plan.master_port_fixed)  // --master-port: that port alone
    s.claim_master_port = [addr = s.master_addr, port = plan.master_port](std::uint32_t) {
      return claim_first_free("MASTER_PORT", {port, port}, {port}, addr, true);
    };
  else  // a step's, or a standalone agent's slot (its pid) in the default range
    s.claim_master_port = [plan, addr = s.master_addr](std::uint32_t attempt) {
      return claim_first_free("MASTER_PORT", plan.port_range, master_port_candidates(plan, attempt), addr,
                              plan.master_port_fixed);
    };
  s.preflight.verbose = plan.verbose;
  return s;
}

Coordinator::Coordinator(EventLoop& loop, const NodePlan& plan, CoordinatorSettings settings)
    : settings_(std::move(settings)),
      job_(plan, settings_.setup_error),
      gate_(loop, GateConfig{plan.run_id, settings_.secret, plan.nnodes, settings_.handshake_timeout, settings_.max_pending},
            gate_events()),
      peers_(plan.nnodes),
      stragglers_(plan.verbose),
      heartbeat_every_(heartbeat_interval(plan.nnodes, std::chrono::milliseconds(plan.heartbeat_timeout_ms))),
      started_(Clock::now()),
      next_heartbeat_scan_(Clock::now()) {}

Status Coordinator::listen(const std::vector<std::uint16_t>& candidates, PortRange range) {
  std::vector<PortRefusal> refusals;
  for (const auto port : candidates) {
    PortClaim claim;
    if (port != 0) {
      auto outcome = claim_port(port, std::nullopt, refusals.size() < 4);  // the first few named
      if (auto* refused = std::get_if<PortRefusal>(&outcome)) {
        refusals.push_back(*refused);
        continue;
      }
      claim = std::move(std::get<PortClaim>(outcome));
    }
    auto listening = gate_.listen(port);
    if (!listening) return fail(listening.error());
    if (*listening) {
      rdzv_claim_ = std::move(claim);
      return Ok{};
    }
    refusals.push_back({port, PortRefusal::Holder::OtherProcess, refusals.size() < 4 ? tcp_port_holder(port) : ""});
  }
  return fail(no_free_port("the rendezvous port", range, refusals, kernel_ephemeral_ports()));
}

RdzvGate::Events Coordinator::gate_events() {
  return {[this](std::uint32_t node) { return job_.refusal(node); },
          [this](std::uint32_t node, std::uint64_t peer) { peers_[node] = {peer, Clock::now()}; },
          [this](std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) { on_message(node, peer, m); },
          [this](std::uint32_t node, std::uint64_t peer, const std::string& why) { on_close(node, peer, why); },
          [this](std::uint32_t, const std::string& why) { decide(job::OtherRelease{why}); }};
}

// An authenticated agent's message, as the job's event. One this release's
// agents never send (malformed, or of the other direction) ends its
// connection, so the node is lost at once with the reason, instead of
// missing at some deadline.
void Coordinator::on_message(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) {
  peers_[node].last_seen = Clock::now();
  auto report = rdzv::decode_report(m);
  if (!report) return gate_.close_peer(peer, "it sent a malformed message: " + report.error());
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, rdzv::Join>) decide(job::Joined{node, r});
        if constexpr (std::is_same_v<R, rdzv::Fail>) decide(job::Failed{node, r.failure});
        if constexpr (std::is_same_v<R, rdzv::Hanging>) decide(job::HangNoticed{node, r.attempt});
        if constexpr (std::is_same_v<R, rdzv::Stopped>) decide(job::Stopped{node, r.attempt, r.unhealthy});
        if constexpr (std::is_same_v<R, rdzv::Finished>) decide(job::Finished{node, r.attempt});
        if constexpr (std::is_same_v<R, rdzv::Signalled>) decide(job::Signalled{node, int(r.signal)});
        if constexpr (std::is_same_v<R, rdzv::Load>) stragglers_.on_load(node, r);
        if constexpr (std::is_same_v<R, rdzv::Checked>)
          if (preflight_ && job_.phase() == job::Phase::Preflight)
            if (auto named = preflight_->on_checked(node, r, Clock::now())) decide(job::PreflightDone{*named});
      },
      *report);
}

void Coordinator::on_close(std::uint32_t node, std::uint64_t peer, const std::string& why) {
  if (peers_[node].id == peer) decide(job::Disconnected{node, why});
}

void Coordinator::decide(job::Event event) {
  waiting_.push_back(std::move(event));
  if (deciding_) return;
  deciding_ = true;
  for (std::size_t i = 0; i < waiting_.size(); ++i)
    for (const auto& action : job_.on(waiting_[i], Clock::now())) carry_out(action);
  waiting_.clear();
  deciding_ = false;
}

void Coordinator::carry_out(const job::Action& action) {
  if (const auto* start = std::get_if<job::Start>(&action)) return this->start(*start);
  if (const auto* stop = std::get_if<job::Stop>(&action)) return gate_.broadcast(rdzv::Stop{stop->attempt}.to_message());
  if (const auto* done = std::get_if<job::Done>(&action)) return gate_.broadcast(rdzv::Done{done->verdict}.to_message());
  if (const auto* say = std::get_if<job::Say>(&action)) return spdlog::warn("{}", say->text);
  if (std::holds_alternative<job::BeginPreflight>(action)) {
    const auto send = [this](std::uint32_t node, const rdzv::Message& m) { gate_.send(peers_[node].id, m); };
    preflight_.emplace(job_, settings_.preflight, send);
    if (auto named = preflight_->begin(Clock::now())) decide(job::PreflightDone{*named});  // no turn to run
    return;
  }
  // BYE to a node that may leave, or a lost one cut off; either may close
  // the connection at once and end the peer.
  const auto node = std::holds_alternative<job::Release>(action) ? std::get<job::Release>(action).node
                                                                 : std::get<job::CutOff>(action).node;
  const auto peer = peers_[node].id;
  if (!gate_.serves(peer, node)) return;
  gate_.mark_closing(peer);
  if (const auto* cut = std::get_if<job::CutOff>(&action)) return gate_.close_peer(peer, cut->why);
  gate_.send(peer, rdzv::Bye{}.to_message());
}

// START, on MASTER_PORT claimed for this attempt. The earlier attempt's port
// goes back first: its workers are stopped, and with --ddp-port it is this
// attempt's too.
void Coordinator::start(const job::Start& order) {
  stragglers_.begin_attempt(order.attempt);
  master_claim_ = PortClaim{};
  auto claim = settings_.claim_master_port(order.attempt);
  if (!claim) return decide(job::CannotStart{claim.error()});
  master_claim_ = std::move(claim).value();
  if (job_.plan().verbose && order.roster_changed) print_plan();
  rdzv::Start start{order.attempt, settings_.master_addr, master_claim_.port(), {}, {}};
  for (const auto& g : job_.roster()->groups) {
    start.group_nodes.push_back(g.node);
    start.group_workers.push_back(g.workers);
  }
  const auto message = start.to_message();
  if (rdzv::encode(message).empty())  // the lists travel in runs: only a step of many thousand odd nodes
    return decide(job::CannotStart{"the step's layout (" + std::to_string(start.group_nodes.size()) +
                                   " nodes) does not fit one rendezvous message; run fewer nodes per step"});
  gate_.broadcast(message);
}

// One summary for the whole step, from node 0 (--ddp-verbose): at the start,
// and again when a lost node's group has moved to a spare or been dropped.
void Coordinator::print_plan() const {
  const auto& roster = *job_.roster();
  spdlog::info("step {}: attempt {}: {} node(s), {} worker(s), MASTER_ADDR={} MASTER_PORT={}, rendezvous port {}",
               job_.plan().run_id, job_.attempt(), roster.groups.size(), world_size(roster), settings_.master_addr,
               master_claim_.port(), gate_.port());
  std::uint64_t rank = 0;
  for (std::uint32_t g = 0; g < roster.groups.size(); ++g) {
    const auto& join = *job_.node(roster.groups[g].node).join;
    const std::uint32_t workers = roster.groups[g].workers;
    spdlog::info("  node {} ({}, {}): group {}, ranks {}-{}", roster.groups[g].node, join.host, join.addr, g, rank,
                 rank + workers - 1);
    for (std::uint32_t local = 0; local < workers; ++local, ++rank)
      spdlog::info("    rank {}: {}",
                   rank, describe_placement(local < join.workers.size() ? join.workers[local] : WorkerPlacement{}));
  }
  for (const auto spare : spare_nodes(roster))
    spdlog::info("  node {} ({}, {}): spare", spare, job_.node(spare).join->host, job_.node(spare).join->addr);
  for (std::uint32_t i = 0; i < job_.size(); ++i)
    if (job_.node(i).lost) spdlog::info("  node {}: lost, not used again", job_.node_name(i));
}

void Coordinator::tick() {
  gate_.tick();
  if (job_.phase() == job::Phase::Done) return;
  const auto now = Clock::now();
  decide(job::Tick{});
  tick_deadlines(now);
  if (job_.phase() == job::Phase::Running) tick_stragglers(now);
  if (job_.phase() == job::Phase::Preflight && preflight_)
    if (auto named = preflight_->tick(now)) decide(job::PreflightDone{*named});
}

// The rendezvous timeout, heartbeats both ways.
void Coordinator::tick_deadlines(Clock::time_point now) {
  const auto& plan = job_.plan();
  const auto rdzv_timeout = std::chrono::milliseconds(plan.rdzv_timeout_ms);
  if (job_.phase() == job::Phase::Rendezvous && now - started_ > rdzv_timeout)
    return decide(job::RendezvousTimedOut{rdzv_timeout});
  // Each node's heartbeat falls due an interval after the last message it
  // was sent; looked for four times an interval, so one is at most a quarter
  // of an interval late (the timeout is three intervals at least).
  if (now >= next_heartbeat_scan_) {
    next_heartbeat_scan_ = now + heartbeat_every_ / 4;
    gate_.heartbeat(rdzv::Heartbeat{}.to_message(), heartbeat_every_);
  }
  // Silent nodes: looked for every 100 ms (the timeout is seconds), not every
  // loop turn, which at 16,384 nodes comes with nearly every message.
  if (now < next_silence_scan_) return;
  next_silence_scan_ = now + std::chrono::milliseconds(100);
  const auto timeout = std::chrono::milliseconds(plan.heartbeat_timeout_ms);
  for (std::uint32_t i = 0; i < job_.size(); ++i) {
    const auto& n = job_.node(i);
    if (n.join && !n.lost && !n.finished && now - peers_[i].last_seen > timeout)
      decide(job::Silent{i, "no heartbeat for " + std::to_string(timeout.count() / 1000) +
                                " s (node down or network cut?)"});
  }
}

// Every 100 ms (windows are seconds long), not every loop turn: at 16,384
// nodes a turn comes with nearly every message.
void Coordinator::tick_stragglers(Clock::time_point now) {
  if (now < next_straggler_look_) return;
  next_straggler_look_ = now + std::chrono::milliseconds(100);
  if (stragglers_.windows_in() < job_.running_nodes()) return;  // counted, not named, until a window is complete
  for (const auto& v : stragglers_.tick(job_.seats())) decide(job::StragglerNamed{v});
}

}  // namespace ddp::agent
