// MpiLink: everything one rank of a multi-process run says to the others, on
// one thread of its own that alone calls MPI while the run goes on
// (MPI_THREAD_SERIALIZED is all it needs):
//
//  - tensors for devices other ranks run: workers hand them to the link's
//    transport (MpiTransport, the Transport seam of core/comm/transport.h),
//    which copies them into a queue; the thread sends them point-to-point and
//    delivers what arrives into the local mailboxes. Collectives are the
//    executor's rings over that same transport, in the same order as in one
//    process, so the sums are bit for bit those of a one-process run;
//  - reports: ranks other than 0 send what their workers report (a
//    ReportBatch) to rank 0, which replays them into its recorder on its own
//    clock (each rank's clock offset measured before the start);
//  - liveness: every rank sends a heartbeat to every other a few times per
//    silence limit; a rank not heard from for the limit, an MPI error or
//    another rank's failure stops the local run with a message naming the
//    rank, so no rank waits forever;
//  - the end: each rank tells rank 0 it is done; once all are, rank 0 tells
//    every rank to finish, so no rank leaves while another may still need it.
//
// Every message travels on one MPI tag, so those of one sender arrive in the
// order sent (MPI's non-overtaking rule): reports before "done".
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/clock_offset.h"
#include "core/runtime/process_share.h"
#include "core/runtime/report_batch.h"
#include "core/runtime/threaded_executor.h"

namespace pipelab::mpi {

class MpiLink {
 public:
  MpiLink(MPI_Comm comm, const ProcessShare& share, double silence_limit_s);
  ~MpiLink();  // ends the thread (after finish(), or as the job is torn down)
  MpiLink(const MpiLink&) = delete;
  MpiLink& operator=(const MpiLink&) = delete;

  // For ProcessShare::make_transport: local devices through `local`, the rest over MPI.
  std::unique_ptr<Transport> wrap(InProcessTransport& local);
  // For ProcessShare::reporter on ranks other than 0.
  RunReporter& reports() { return reports_; }

  // Starts the thread once `executor` has started. A failure anywhere aborts
  // `executor` with the message. On rank 0, `offsets` holds every rank's
  // clock offset, and the other ranks' reports go to `executor`'s recorder.
  void start(ThreadedExecutor& executor, std::vector<ClockOffset> offsets);
  // The local run is over (`local_failure` says why it failed, or is empty):
  // tells the others and waits until every rank is done or one failed.
  // Returns the run's failure: "" when every rank finished.
  std::string finish(const std::string& local_failure);

  // A message for device `to` on another rank; copied into the queue.
  void send_tensor(int to, const MessageTag& tag, const float* values, int64_t rows, int64_t cols);

 private:
  enum class Kind : uint32_t { Tensor, Reports, Heartbeat, Done, Finish, Failure };
  struct Header {
    Kind kind = Kind::Heartbeat;
    int32_t from = 0;
    double origin = 0;  // Reports: the sender's run-clock origin (steady seconds)
  };
  struct Outgoing {
    int to_rank = 0;
    std::vector<char> bytes;
  };
  struct InFlight {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<char> bytes;
  };

  void run();
  void loop_once();
  void queue(int to_rank, Kind kind, std::vector<char> payload, double origin = 0);
  void post_queued();
  void reap_sends();
  void receive_arrived();
  void handle(int from, const std::vector<char>& bytes);
  void send_heartbeats();
  void check_silence();
  void follow_protocol();
  // The first failure anywhere: stops the local run, tells the others when it
  // was found here, and ends the thread.
  void fail(const std::string& message, bool tell_others);
  bool exiting() const;

  MPI_Comm comm_;
  const ProcessShare share_;
  const double silence_limit_s_;
  ReportBatch reports_;
  InProcessTransport* local_ = nullptr;  // set by wrap()
  ThreadedExecutor* executor_ = nullptr;
  std::vector<ClockOffset> offsets_;  // rank 0

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Outgoing> queue_;
  bool local_done_ = false;
  std::string local_failure_;
  std::string failure_;  // the first failure anywhere
  bool ended_ = false;   // the thread has nothing more to do

  // The thread's own.
  std::list<InFlight> in_flight_;
  std::vector<double> last_heard_;  // per rank, steady seconds
  std::vector<char> done_;          // rank 0: per rank
  double next_heartbeat_ = 0;
  bool done_sent_ = false;
  bool finish_sent_ = false;
  bool finish_received_ = false;
  std::thread thread_;
};

}  // namespace pipelab::mpi
