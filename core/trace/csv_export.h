// CSV export: a Trace as three tables for spreadsheets and notebooks. Times are
// in the trace's own unit (seconds, or abstract units for unit-cost traces);
// memory is in bytes; a NaN metric is an empty cell.
#pragma once

#include <ostream>
#include <string>

#include "core/trace/trace_events.h"

namespace pipelab {

// device,kind,stage,chunk,microbatch,step,weight_version,weight_delay,peer,t_begin,t_end,duration,bytes
void write_events_csv(const Trace& trace, std::ostream& out);
// device,t,weights,gradients,optimizer_state,activations,stashed_weights,comm_buffers,
// workspace,total
void write_memory_csv(const Trace& trace, std::ostream& out);
// step,t_end,loss,accuracy,val_loss,val_accuracy,step_time_s,samples_per_s,
// bubble_measured,bubble_simulated
void write_steps_csv(const Trace& trace, std::ostream& out);

// Writes the Chrome trace to chrome_json_path and the three tables to
// <csv_prefix>_events.csv, <csv_prefix>_memory.csv and <csv_prefix>_steps.csv.
// An empty path or prefix skips that part. Returns false, with a message naming
// the file in *error (when error is not null), if a file cannot be written;
// files written before the failure stay.
bool export_trace_files(const Trace& trace, const std::string& chrome_json_path,
                        const std::string& csv_prefix, std::string* error);

}  // namespace pipelab
