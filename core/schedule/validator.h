// Validator: checks that a schedule can run and means what it says.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/schedule.h"

namespace pipelab {

struct ValidationReport {
  std::vector<std::string> errors;  // each names the device, op and rule broken
  bool ok() const { return errors.empty(); }
};

// Checks, for compute-only (generator output) and lowered schedules:
//  - shape: device lists = pp (compute-only) or dp * tp * pp; each op's device,
//    stage (on rank stage % pp, chunk stage / pp), step and micro-batch in range;
//  - every micro-batch's F and B (or BI and BW) exactly once per stage and step,
//    on the right device; B/BI after its own F, BW after its BI, RECOMPUTE
//    between them (and present before each B/BI when recompute is on); an
//    OFFLOAD after its F, and then its RELOAD, before its B/BI;
//  - lowered: each F whose input comes from another device has a RECV_ACT
//    before it, each B/BI a RECV_GRAD; every receive is matched by exactly one
//    send (same micro-batch and step, neighbouring stage, consistent peers) that
//    comes after the op producing the data; collectives of a group (tp shards of
//    a stage; dp replicas of a stage and shard) match one for one, in order;
//    async data parallel has one PUSH_GRAD then PULL_WEIGHTS per stage and step;
//  - no deadlock: program order (a device runs its ops one after another),
//    send -> receive edges (receives wait, sends do not), collectives (each
//    waits for all its members), bounded-staleness pulls (see lowering.h), and,
//    where no message carries them (compute-only schedules, stages sharing a
//    device), the data dependencies F(s - 1) -> F(s) and B/BI(s + 1) -> B/BI(s)
//    must form an acyclic graph;
//  - weight versions: a forward reads the version its schedule's semantics
//    give (synchronous: step t reads t; pipedream: one update per backward done
//    on the stage; 2bw: one per finished step; async data parallel:
//    max(0, t - staleness)), and when lowered the newest version a U or pull
//    produced on its device; B, BI, BW and RECOMPUTE read their F's version
//    (pipemare: the stage's newest) and record the updates in between as
//    weight_delay (0 unless pipemare); a U
//    writes the stage's next version, after the gradients it applies (the
//    step's last backward; pipedream, pipemare: a backward), one per step (per
//    backward), each after a data-parallel all-reduce when dp > 1; pipedream-2bw
//    keeps at most two versions alive per stage.
// Each error names the device, the op (op_label) and the rule broken; after 50
// errors the rest are counted in a last line. Runs in time linear in the ops.
ValidationReport validate_schedule(const Schedule& schedule);

}  // namespace pipelab
