#include "ui/core_message_text.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <algorithm>
#include <vector>

namespace pipelab {
namespace {

// core/'s wording with its values as %1, %2, ... in the order they appear (a
// value may be empty: a name left blank).
// Longer patterns first where one extends another (the progress lines).
constexpr const char* kPatterns[] = {
    // The run log (core/runtime), shown in the status bar.
    QT_TRANSLATE_NOOP("CoreMessage", "finished %1 steps in %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "stopped after %1 of %2 steps"),
    QT_TRANSLATE_NOOP("CoreMessage", "error: %1"),
    // A run that fails on a device: out of host or GPU memory (the op it
    // was running follows, "(during %1)").
    QT_TRANSLATE_NOOP("CoreMessage",
                      "device %1 ran out of host memory; use a smaller model, batch or fewer "
                      "micro-batches in flight"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "out of GPU memory on GPU %1: asked %2 for %3, %4 free; this device counts "
                      "%5 in use and holds %6 cached; the %7 virtual devices on that GPU count %8 "
                      "and hold %9; use fewer micro-batches in flight, recompute, or more pipeline "
                      "stages"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "out of GPU memory on GPU %1: asked %2 for %3, %4 free; this device counts "
                      "%5 in use and holds %6 cached; use fewer micro-batches in flight, "
                      "recompute, or more pipeline stages"),
    // A run too large to save (core/io/run_file.cpp's run_file_size_problem).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "this run (%1 million events, %2 million memory samples) makes a %3 MiB "
                      "file, more than the %4 MiB a run file may take to open again; export its "
                      "trace instead (Chrome trace or CSV), or train fewer steps or micro-batches"),
    // A run over processes (pipelab --attach) whose rank fails.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "rank %1 has not answered for %2 s (it died, stopped or its network is cut); "
                      "stopping the run"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "step %1/%2: loss %3, accuracy %4, validation loss %5, validation accuracy %6"),
    QT_TRANSLATE_NOOP("CoreMessage", "step %1/%2: loss %3, validation loss %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "step %1/%2: loss %3, accuracy %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "step %1/%2: loss %3"),
    // The experiment's problems (core/io, core/plan, core/schedule) that a
    // slider or spin box in the panels can cause.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "pp = %1 but the model has %2 splittable layers; use pp <= %3 or add layers"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "pp x chunks = %1 (pp = %2, chunks = %3) but the model has %4 splittable "
                      "layers; use pp x chunks <= %5 or add layers"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "training.batch_size = %1 is not divisible by parallel.dp = %2; every "
                      "replica takes an equal share of the batch"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.microbatches = %1 does not divide the per-replica batch "
                      "training.batch_size / parallel.dp = %2; use e.g. %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.microbatches: interleaved-1f1b needs microbatches (%1) to be a "
                      "multiple of its round count max(1, microbatches / pp) = %2 (as PyTorch's "
                      "ScheduleInterleaved1F1B); every m < 2 * pp (%3) and every multiple of pp "
                      "works; try microbatches = %4 or %5"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.microbatches: dualpipev needs microbatches (%1) >= its stage count "
                      "2 * pp = %2 (as PyTorch's ScheduleDualPipeV); try microbatches = %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.microbatches = %1 must be >= parallel.pp = %2 for pipedream-2bw "
                      "(two weight versions suffice only when a step's micro-batches fill the "
                      "pipeline); use microbatches = %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.schedule = interleaved-1f1b needs parallel.chunks >= 2 (virtual "
                      "stages per device); with chunks = 1 it is plain 1f1b"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.chunks = %1 needs parallel.schedule = interleaved-1f1b (schedule %2 "
        "places one stage per device); set chunks = 1 or change the schedule"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "tp = %1 does not divide linear layer %2's width %3; choose a tp that "
                      "divides it or change the layer's out"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.sequence_parallel splits the work tensor parallelism repeats on "
                      "every shard, so it needs parallel.tp >= 2 (now %1); raise tp or set "
                      "sequence_parallel = false"),
    // A plan too large to build (core/schedule/lowering.cpp's check_schedule_size).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes "
        "a schedule of about %7 ops in one replica, more than the %8 PipeLab builds; "
        "use fewer devices or micro-batches"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes "
        "a schedule of about %7 ops, more than the %8 PipeLab builds; simulate one "
        "replica for all (pipelab-cli simulate without --trace or --csv), or use fewer "
        "devices or micro-batches"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes "
        "a schedule of about %7 ops, more than the %8 PipeLab builds; use fewer "
        "devices or micro-batches"),
    QT_TRANSLATE_NOOP("CoreMessage", "training.optimizer.lr = %1 must be > 0, e.g. 0.05"),
    // ZeRO (the Parallel panel's ZeRO stage) with what it does not go with.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.zero = %1 reduce-scatters the gradients after every micro-batch's "
                      "backward, which a pipeline (pp = %2) would wait on between its stages "
                      "(DeepSpeed refuses it too); use zero = 1 with a pipeline, as Megatron-LM's "
                      "distributed optimizer does, or pp = 1"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.zero = %1 shards the state that one synchronous step updates, and %2 "
        "updates each replica on its own; use a synchronous schedule with update = "
        "sync, or zero = 0"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.reshard_after_forward = false keeps ZeRO-3's gathered weights from a "
        "forward to its backward, and parallel.zero = %1 keeps them whole anyway; set zero "
        "= 3, or remove reshard_after_forward"),
    // Context parallelism (the Parallel panel's cp) where the model cannot split.
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.cp = %1 splits a Transformer's sequences over ranks, and this model "
        "does not start with an embedding; set cp = 1"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.cp = %1 cuts the sequence length %2 into 2 x cp = %3 equal chunks "
        "(each rank takes one from each end, balancing causal attention), which it does "
        "not divide; choose a cp with 2 cp dividing model.input, or change the sequence "
        "length"),
    // Expert parallelism (an experiment with ep > 1, e.g. the expert-parallel
    // preset): dp, update, a moe layer's experts or removing it.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.ep = %1 does not divide parallel.dp = %2: expert-parallel groups "
                      "are carved out of the data-parallel replicas; use an ep that divides dp, "
                      "or raise dp"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.ep = %1 spreads moe layers' experts over replicas, and this model "
        "has none; set ep = 1 or add a moe layer (or experts to a transformer_block)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "model.layers[%1] has %2 experts, which parallel.ep = %3 cannot share out "
                      "evenly; use an ep that divides the experts"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.ep > 1 exchanges tokens between replicas at every micro-batch, "
                      "which asynchronous data parallel cannot wait for; set parallel.update = "
                      "sync or ep = 1"),
    // ... and that the data panel can cause.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "model.input = %1 gives %2 features but data.source '%3' has %4; set "
                      "model.input to [%5]"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the model outputs %1 values but data.source '%2' has %3 classes; set the last "
        "linear layer's out to %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.path is empty; data.source = '%1' reads files: give the folder holding "
                      "them"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.path is empty; data.source = '%1' reads a CSV file: give its path"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.path is empty; data.source = '%1' reads a UTF-8 text file: give its "
                      "path (the LICENSE file will do)"),
    // A Transformer's shapes (the Model panel's layer table).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the model outputs %1 values per position but data.source '%2' has a "
        "vocabulary of %3 tokens (data.vocab); set the last linear layer's out to %4"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "tp = %1 does not divide embedding layer %2's vocab %3 (each shard holds vocab "
        "/ tp rows); choose a tp that divides it or pad the vocab to a multiple of tp"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1: kv_heads = %2 must divide heads = %3 (grouped-query attention shares each "
        "key/value head among heads / kv_heads query heads); use a divisor of heads (1: "
        "multi-query), or 0 for kv_heads = heads"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1: heads = %2 does not divide the block's width %3; choose heads that divide "
        "it (e.g. %4) or change the embedding's dim"),
    // Schedules and their virtual stages (the Parallel panel's schedule and chunks).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.schedule = %1 needs parallel.chunks = 2 (each device holds two virtual "
        "stages placed in a V; got chunks = %2); set chunks = 2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.microbatches = %1 must be >= parallel.pp = %2 for pipedream-2bw (two "
        "weight versions suffice only when a step's micro-batches fill the pipeline); use "
        "microbatches = %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1: boundary %2 is outside 1..%3 (the model has %4 layers)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1: boundaries must be strictly increasing (%2 follows %3)"),
    // A field of the wrong kind or name in an experiment file (or --set).
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be an integer, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be true or false, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a layer type; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a precision; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not an optimizer; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a schedule; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not an update mode; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a partition rule; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not an offload mode; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a loss; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a norm; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not an activation; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a data source; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = '%2' is not a backend; valid: %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 = '%2' is not a device profile; valid: %3, or the path of a device "
                      "file (hardware/README.md)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: '%2' is not a node type of the hardware catalogue; valid: %3, or the "
                      "path of a .json file that describes one (see hardware/README.md)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 must be false, true (\"full\": keep only each stage's input and rebuild the "
        "stage), \"block\" (keep each Transformer block's input and rebuild one block at a "
        "time, as Megatron-LM) or \"selective\" (recompute transformer blocks' attention), "
        "got %2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.recompute = \"selective\" recomputes transformer blocks' attention, and "
        "this model has none; use recompute = true (full) or false"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.recompute = \"block\" keeps each Transformer block's input, and this "
        "model has none; use recompute = true (full) or false"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.recompute_layers = %1 must be at least 1 (the blocks rebuilt "
                      "together under recompute = \"block\")"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.recompute_layers = %1 groups the blocks that recompute = "
                      "\"block\" rebuilds together; set recompute = \"block\", or remove "
                      "recompute_layers"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.recompute = \"block\": the %1 executor rebuilds a whole stage's activations "
        "before its backward, not one block at a time (the cpu backend does); set "
        "backend.type = cpu, or parallel.recompute = true, or simulate"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2; repeat a layer 1 to %3 times"),
    // A layer's own sizes (the Model panel's table).
    QT_TRANSLATE_NOOP("CoreMessage", "%1: %2 needs out (output channels) >= %3, got %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1: %2 needs %3 >= %4, got %5"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: batchnorm eps must be in (0, 1), got %2 (PyTorch's default is %3)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: batchnorm momentum must be in (0, 1], got %2 (PyTorch's default is %3)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: %2 padding = %3 must be in [0, kernel) (kernel %4); a larger padding "
                      "only adds rows of zeros"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: %2's %3 x %4 window (padding %5) does not fit its %6 input; use a "
                      "smaller kernel or more padding, or downsample less before it"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: %2 top_k = %3 must be in [1, experts = %4]; use 1 (Switch) or 2 "
                      "(GShard), or add experts"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1: %2 capacity_factor must be > 0 (e.g. %3), got %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the embedding's vocab = %1 is smaller than data.vocab = %2; set %3.vocab "
                      "to at least %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the layers up to %1 hold more than %2 parameters, more than PipeLab "
                      "handles; use narrower or fewer linear layers"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "a micro-batch of %1 samples keeps and sends more than %2 GiB through the "
                      "model (%3 bytes per sample), more than PipeLab handles; lower "
                      "training.batch_size or raise parallel.microbatches"),
    // What a run on this machine's memory refuses before it starts
    // (core/runtime/host_memory_check.cpp), with each set of advice it gives.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.samples = %1 needs about %2 but only %3 of memory is available; use "
                      "fewer samples"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "this run needs about %1 for weights, gradients, optimizer state and "
                      "activations (device %2 alone %3) but only %4 of memory is available; use a "
                      "smaller model or training.batch_size, or fewer devices"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "this run needs about %1 for weights, gradients, optimizer state and "
                      "activations (device %2 alone %3) but only %4 of memory is available; use a "
                      "smaller model or training.batch_size, parallel.recompute = true, or fewer "
                      "devices"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "this run needs about %1 for weights, gradients, optimizer state and "
                      "activations (device %2 alone %3) but only %4 of memory is available; use a "
                      "smaller model or training.batch_size, 1f1b instead of gpipe, or fewer "
                      "devices"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "this run needs about %1 for weights, gradients, optimizer state and "
                      "activations (device %2 alone %3) but only %4 of memory is available; use a "
                      "smaller model or training.batch_size, 1f1b instead of gpipe, "
                      "parallel.recompute = true, or fewer devices"),
    // The data, as a run loads it.
    QT_TRANSLATE_NOOP("CoreMessage", "%1: file not found"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: the training split has %2 samples, fewer than training.batch_size = "
                      "%3; lower the batch size or use more samples"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.limit is %1; use 0 for all samples or a positive count"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "text: data.stride is %1; use 1..%2 (data.sequence_length; more would skip "
                      "characters), or 0 for %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the model outputs %1 values per position but %2 has a vocabulary of %3 "
                      "tokens; set the last linear layer's out to %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the embedding's vocab = %1 but %2 has %3 tokens; set model.layers[0].vocab "
                      "to at least %4"),
    // The data files' errors (core/data), shown when a run loads its data. The file,
    // set or CSV position before the first ": " is a place, kept (or translated: "line %1,
    // column %2") by core_message_text, so most patterns are the text after it.
    QT_TRANSLATE_NOOP("CoreMessage", "batch size %1 is too small; use at least 1"),
    QT_TRANSLATE_NOOP("CoreMessage", "no samples to make batches from"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "batch size %1 is larger than its %2 samples; lower the batch size or use more samples"),
    // A CSV file's rows and cells (core/data/csv_reader.cpp); label patterns before the
    // plain "%1 is not a number" they would otherwise fall under.
    QT_TRANSLATE_NOOP("CoreMessage", "line %1, column %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "empty cell; every feature needs a number"),
    QT_TRANSLATE_NOOP("CoreMessage", "empty label cell"),
    QT_TRANSLATE_NOOP("CoreMessage", "label %1 is not a number"),
    QT_TRANSLATE_NOOP("CoreMessage", "label %1 is negative; labels are class numbers 0, 1, 2, ..."),
    QT_TRANSLATE_NOOP("CoreMessage", "label %1 is not a whole number"),
    QT_TRANSLATE_NOOP("CoreMessage", "label %1 is too large (at most %2)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not a finite 32-bit number"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not a number"),
    QT_TRANSLATE_NOOP("CoreMessage", "file is empty"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "line %1 has 1 cell; rows need a label column and at least one feature "
                      "column (separated by commas)"),
    QT_TRANSLATE_NOOP("CoreMessage", "label column %1 is outside the rows' %2 cells"),
    QT_TRANSLATE_NOOP("CoreMessage", "line %1 has %2 cells but line %3 has %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "holds a header row but no data rows"),
    QT_TRANSLATE_NOOP("CoreMessage", "holds no data rows"),
    // Reading a data file, gzip included (core/data/file_bytes.cpp).
    QT_TRANSLATE_NOOP("CoreMessage", "cannot start gzip decompression (zlib out of memory)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "decompresses to more than %1, more than PipeLab reads from one data file; "
                      "use a smaller file"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "corrupted gzip: %1 unexpected bytes after the compressed data"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "truncated gzip: the compressed data ends early (%1 bytes read)"),
    QT_TRANSLATE_NOOP("CoreMessage", "corrupted gzip data (%1)"),
    QT_TRANSLATE_NOOP("CoreMessage", "out of memory while decompressing"),
    QT_TRANSLATE_NOOP("CoreMessage", "gzip decompression failed (zlib error %1)"),
    QT_TRANSLATE_NOOP("CoreMessage", "read error"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "changed while it was being read: it held %1 bytes when opened but only %2 could be read "
        "(is it still being written or downloaded?); try again when it is complete"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "changed while it was being read: it grew past the %1 bytes it held when opened (is it "
        "still being written or downloaded?); try again when it is complete"),
    QT_TRANSLATE_NOOP("CoreMessage", "is a folder, expected a file"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "is not a regular file (a device, pipe or socket); give a data file"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot read its size (%1)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "holds %1 bytes, more than the %2 PipeLab reads from one data file; use a smaller file"),
    // MNIST-style IDX folders and files (core/data/idx_folder.cpp, idx_reader.cpp); the
    // header's claim in its two forms (images, labels) before its general form.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.path is empty; name the folder that holds the IDX files"),
    QT_TRANSLATE_NOOP("CoreMessage", "folder not found"),
    QT_TRANSLATE_NOOP("CoreMessage", "is a file; %1 needs the folder that holds the IDX files"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot list the folder (%1)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "holds no %1 IDX files; expected t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
        "(and the train-* pair), raw or .gz; download them with: datasets/download.sh %2 %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "holds no %1 IDX files; expected t10k-images-idx3-ubyte.gz and "
                      "t10k-labels-idx1-ubyte.gz (and the train-* pair), raw or .gz"),
    QT_TRANSLATE_NOOP("CoreMessage", "no matching labels file %1labels-idx1-ubyte(.gz) in %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "no matching images file %1images-idx3-ubyte(.gz) in %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "holds %1 IDX file pairs and cannot tell which to use; keep one train-* pair "
                      "and one t10k-* (or test-*) pair"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "truncated: an IDX file starts with a 4-byte magic number but the file holds %1 bytes"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX images of unsigned bytes); this is "
                      "not an IDX file"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX labels of unsigned bytes); this is "
                      "not an IDX file"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX images of unsigned bytes); values "
                      "of type %3 are not supported"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX labels of unsigned bytes); values "
                      "of type %3 are not supported"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX images of unsigned bytes); is this "
                      "a labels file?"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "wrong magic number %1: expected %2 (IDX labels of unsigned bytes); is this "
                      "an images file?"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "truncated: the header of a %1-dimensional IDX file needs %2 bytes but the file holds %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "truncated: header says %1 images of %2 (%3 bytes) but the file holds %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "truncated: header says %1 images of %2 but the file holds %3 bytes of data"),
    QT_TRANSLATE_NOOP("CoreMessage", "truncated: header says %1 labels but the file holds %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "too long: header says %1 images of %2 (%3 bytes) but the file holds %4; the "
                      "file is damaged or not what it claims"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "too long: header says %1 labels but the file holds %2; the file is damaged "
                      "or not what it claims"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "truncated: header says %1 but the file holds %2 bytes of data"),
    QT_TRANSLATE_NOOP("CoreMessage", "truncated: header says %1 but the file holds %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "too long: header says %1 but the file holds %2; the file is damaged or not "
                      "what it claims"),
    QT_TRANSLATE_NOOP("CoreMessage", "header says 0 images; the file holds no data"),
    QT_TRANSLATE_NOOP("CoreMessage", "header says images of %1 pixels, an empty shape"),
    QT_TRANSLATE_NOOP("CoreMessage", "header says 0 labels; the file holds no data"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "holds %1 labels but %2 holds %3 images; the two files must come from the same set"),
    QT_TRANSLATE_NOOP("CoreMessage", "images are %1 but %2 images are %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "label %1 at index %2 is out of range: %3 labels are 0..%4"),
    // Choosing and splitting a data set (core/data/load_dataset.cpp, sequence_tasks.cpp,
    // split.cpp, synthetic.cpp, text_corpus.cpp); "use 2..%2 (or 0 ...)" before "use 2..%2".
    QT_TRANSLATE_NOOP("CoreMessage", "images have %1 pixels but %2 has %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.path is empty; name the CSV file"),
    QT_TRANSLATE_NOOP("CoreMessage", "unknown data.source %1: valid sources are %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.normalization is '%1', but a sequence set's inputs are token ids, "
                      "which must not be scaled; use none"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.limit %1 leaves no training sample after validation; raise it"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.samples is %1; a sequence task needs at least 1 sample"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.vocab is %1; %2 needs at least %3 %4; raise data.vocab"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.vocab is %1; a sequence task uses at most %2 tokens; lower data.vocab"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "data.sequence_length is %1; %2 needs at least %3 %4; raise data.sequence_length"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 samples x %2 tokens is too large (at most %3 tokens); lower data.samples "
                      "or data.sequence_length"),
    QT_TRANSLATE_NOOP("CoreMessage", "unknown sequence task %1: valid ones are %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.validation_fraction is %1; use a value in [0, 1), e.g. 0.2 to hold out "
                      "a fifth of the samples"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.validation_fraction %1 leaves no training sample out of %2; lower it "
                      "or use more samples"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.samples is %1; a synthetic set needs at least 1 sample"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.noise is %1; use a finite value >= 0"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 samples x %2 features is too large (at most %3 values); lower data.samples"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.classes is %1; use 2..%2 (or 0 for a regression set)"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.classes is %1; use 2..%2"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.features is %1; use at least 1"),
    QT_TRANSLATE_NOOP("CoreMessage", "unknown synthetic data set %1: valid ones are %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.sequence_length is %1; use at least 1 character per sample"),
    QT_TRANSLATE_NOOP("CoreMessage", "data.sequence_length is %1; use at most %2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "not valid UTF-8 at byte %1 (%2); a text source must be UTF-8: convert the file to UTF-8"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "holds %1, more than the %2 PipeLab reads as text; use a shorter text"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "is empty; a text source needs at least %1 characters of UTF-8 text"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "holds %1; one sample needs %2; use a longer text or lower data.sequence_length"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "its training part (the first %1) is shorter than one sample of %2; lower "
                      "data.validation_fraction or data.sequence_length"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "its validation part (the last %1) is shorter than one sample of %2; raise "
        "data.validation_fraction, lower data.sequence_length, or use 0 for no validation"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "makes %1 samples of %2 tokens, more than the %3 tokens a sequence set "
                      "holds; raise data.stride or use a shorter text"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.path is empty; name a UTF-8 text file, such as the LICENSE file at the "
                      "top of the PipeLab sources"),
    // Tensor parallelism's divisibility (the Parallel panel's tp).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "tp = %1 does not divide transformer_block layer %2's ffn = %3; choose a tp "
                      "that divides it or change ffn"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "tp = %1 does not divide transformer_block layer %2's heads = %3 (attention "
                      "is split by heads); choose a tp that divides it or change heads"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "tp = %1 does not divide the sequence length %2, which "
                      "parallel.sequence_parallel splits; choose a tp that divides it or change "
                      "model.input"),
    // Training and simulation settings.
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 = %2 must be >= 1 (updates over which the step size returns to "
                      "training.optimizer.lr); to keep the plain step size set lr_rescheduling = "
                      "false"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 must be > 0, e.g. %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 must be >= 0 (0: as many nodes as the run needs)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "simulation.cluster needs a device, but simulation.profile = unit prices "
                      "every op at its unit cost on no hardware; set simulation.profile to a "
                      "device (e.g. h100) or drop simulation.cluster"),
    // A field of the wrong kind, a missing or unknown key, text that is not JSON (experiment and
    // hardware files).
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be a number, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be a string, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be a JSON object {...}, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "unknown key %1 (did you mean '%2'?); valid keys here: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "unknown key %1; valid keys here: %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "not valid JSON: %1"),
    // What a file's model, data and split can get wrong beyond a single field's value.
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is empty; give the input shape per sample, e.g. [%2]"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing and data.source '%2' does not fix it; give the input shape "
                      "per sample, e.g. \"input\": [%3]"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be an array of integers like [2, 4], got %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is an embedding, which reads token ids, but data.source '%2' gives "
                      "feature vectors; use data.source = %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 needs a \"type\"; valid: %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: conv2d works on images, but its input is a flat vector of %2 values; "
                      "give model.input as [channels, height, width] (MNIST: [1, 28, 28]) and keep "
                      "image layers before any flatten, global_avgpool or linear"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.offload = activations and parallel.recompute = true both free the activations "
        "between forward and backward; choose one (offload = none, or recompute = false)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 = [%2] lists %3 stage starts but pp = %4 stages need %5 "
                      "(parallel.boundaries: where each stage after the first begins)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 = [%2] lists %3 stage starts but pp x chunks = %4 (pp = %5, chunks = %6) stages need "
        "%7 (parallel.boundaries: where each stage after the first begins)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 must be a rule (balanced, uniform, params, explicit) or an array of "
                      "stage start indices like [2, 4], got %2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.sequence_parallel splits along the sequence, so it needs a Transformer (a model "
        "that starts with an embedding); set sequence_parallel = false"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; describe the network, e.g. \"model\": {\"input\": [%2], "
                      "\"layers\": [{\"type\": \"linear\", \"out\": 10}]}"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; list the layers, e.g. [{\"type\": \"linear\", \"out\": 10}]"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: a transformer_block works on token sequences; start the model with an "
                      "embedding ({\"type\": \"embedding\", \"vocab\": 256, \"dim\": 128}) and "
                      "give model.input = [sequence length]"),
    // A saved run that is not one, or not of this version (core/io/run_file.cpp).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "not a PipeLab run file (no \"format\": \"pipelab-run\"); an experiment opens with File > "
        "Open, a run saved with Runs > Save the latest run… opens here"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 has no \"%2\""),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 lists %2 devices, but the experiment's plan has %3 (dp x tp x cp x pp); "
                      "save the run again"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is device %2; the list holds devices 0, 1, ... in order"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is not a device id (0 to %3)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is %2, not the columns this version of PipeLab reads; save the run again with it"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be an array, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "version %1 of the run format; this PipeLab reads version %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is not a finite number"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be an array of %2 values, got %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is not an op kind"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 = %2 is not a group; valid: none, tensor_parallel, data_parallel, "
                      "expert_parallel, context_parallel"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 ends before it begins"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is not a byte count (0 to 2^53)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 has %2 routed counts but %3 dropped ones (one of each per expert)"),
    QT_TRANSLATE_NOOP("CoreMessage", "trace.devices lists %1 devices, more than %2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is %2 bytes long, more than the %3 a run file's names and labels may take; shorten it"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is on device %2, but the run has %3 (0 to %4)"),
    // Where a problem in a hardware file is: its device or node.
    QT_TRANSLATE_NOOP("CoreMessage", "device '%1'"),
    QT_TRANSLATE_NOOP("CoreMessage", "node '%1'"),
    // A device file's fields (hardware/README.md).
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 must be a positive number (%3)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 = %2 must be a fraction in (0, 1]: the share of the peak that kernels reach"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 = %2 must be >= 0 and at most 1073741824 (MiB; 0 or absent where the "
                      "device holds none)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "peak_tflops has no fp32; give the device's FP32 peak (every device has one)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "achieved.gemm_fraction has no %1, which peak_tflops has; give the fraction "
                      "of that peak a large GEMM sustains"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "achieved.gemm_fraction.%1 has no peak in peak_tflops; add peak_tflops.%2 or "
                      "drop the fraction"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "compute_units = %1 must be >= 0 (the GPU's streaming multiprocessors; 0 or "
                      "absent prices every GEMM at one rate)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "achieved.kernel_launch_us = %1 must be >= 0 (microseconds per kernel)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "achieved.op_overhead_us = %1 must be >= 0 (microseconds per op; 0 or absent for a GPU)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "node is empty; name the node type this device sits in (e.g. dgx-h100)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give the device's id (e.g. \"h100\")"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give its memory in GB (10^9 bytes)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give its datasheet memory bandwidth in GB/s"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is missing; give its dense datasheet peaks, e.g. {\"fp32\": 67, \"bf16\": 989}"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; give what its kernels reach: gemm_fraction, "
                      "memory_bandwidth_fraction, kernel_launch_us"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; give the fraction of each peak a large GEMM sustains"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is missing; give the fraction of the memory bandwidth streaming kernels reach"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; give the launch cost of one kernel in microseconds"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; name the node type it sits in (e.g. \"dgx-h100\")"),
    // A node file's fields (hardware/README.md).
    QT_TRANSLATE_NOOP("CoreMessage", "device is empty; name the device its slots hold (e.g. h100)"),
    QT_TRANSLATE_NOOP("CoreMessage", "devices_per_node = %1 must be at least 1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "device_link.nvls_algbw_gb_s = %1 must be >= 0 (GB/s; 0 or absent where the "
                      "switches cannot reduce)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be >= 0 (microseconds per message)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "device_link connects %1 devices but the node holds %2; lower devices_per_node or raise "
        "device_link.devices_connected to what the fabric connects"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "network.nics = %1 must be at least 1 (a node reaches the others through its NICs)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give the node type's id (e.g. \"dgx-h100\")"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; name the device its slots hold (e.g. \"h100\")"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give how many devices one node holds"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; describe the fabric between its devices (bandwidth_gb_s, "
                      "latency_us, devices_connected)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give GB/s per device per direction"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give microseconds per message"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; give how many devices the fabric connects all-to-all"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; describe the link to host memory (bandwidth_gb_s)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is missing; give what a host-side optimizer step sustains, GB/s"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is missing; describe the NICs between nodes (nics, nic_bandwidth_gbit_s, latency_us)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give how many NICs one node has"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is missing; give Gbit/s per NIC per direction"),
    // An experiment or hardware file that cannot be read or written (core/io/file_text.cpp).
    QT_TRANSLATE_NOOP("CoreMessage", "%1 file not found: %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is a folder; give the %2's .json file"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot open %1 file %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot read %1 file %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot write %1 %2: cannot create %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot write %1 %2: %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot write %1 %2"),
    // A run file that cannot be read or written (core/io/run_file.cpp).
    QT_TRANSLATE_NOOP("CoreMessage", "cannot write %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "could not finish writing %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "run file not found: %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is a folder; give a run's .json file"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot open run file %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "cannot read run file %1"),
    // A file's JSON, its keys and an override (core/io).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the JSON text is larger than the %1 MiB %2 may take; is this the right file?"),
    QT_TRANSLATE_NOOP("CoreMessage", "the JSON is nested more than %1 levels deep; %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not usable JSON: %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is too large"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is out of range"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 has %2 entries (index 0..%3), not %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is a single value, it has no %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "override value %1 is not valid UTF-8 text; write it in UTF-8"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "override %1 must look like key.path=value, e.g. parallel.pp=4"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be an object like {\"type\": \"relu\"}, got %2"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "model.input is missing and data.source %1 does not fix it; give the input "
                      "shape per sample, e.g. \"input\": [784]"),
    QT_TRANSLATE_NOOP("CoreMessage", "model.layers must be an array of layers, got %1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "model.layers: with repeats the model has more than %1 layers, more than "
                      "PipeLab handles; use fewer layers or smaller repeats"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1: a sequence set's samples are as long as the model's input; remove it "
                      "and set model.input = [N] for N tokens per sample"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "parallel.partition must be a rule (%1) or an array of stage start indices "
                      "like [2, 4], got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "sources must be a JSON object {\"figure\": \"source\", ...}"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is not a %2 of the hardware catalogue; valid: %3, or the path of a .json "
                      "file that describes one (see hardware/README.md)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the device file %1 must end in .json, which is how an experiment's "
                      "simulation.profile tells a file from a catalogue name"),
    // The experiment's data, model and schedule beyond one field
    // (core/io/experiment_validation.cpp).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "data.classes = 0 makes 'teacher' a regression set (one target per sample); "
                      "it needs model.loss = mse, or set data.classes >= 2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "data.source '%1' gives token sequences, which need a model that starts with an embedding "
        "layer; add {\"type\": \"embedding\", \"vocab\": ..., \"dim\": ...} as model.layers[0]"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the model outputs %1 values but data.source '%2' has %3 target; set the "
                      "last linear layer's out to %4"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "parallel.update = async with parallel.schedule = %1 is contradictory: update = async "
        "means asynchronous data parallelism through a parameter server, while %2 already updates "
        "asynchronously inside the pipeline with its own weight versions; use update = sync with "
        "%3, or a synchronous schedule (e.g. 1f1b) with update = async"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "a batchnorm with sync: true sums its statistics over the replicas at every "
                      "micro-batch, which asynchronous data parallel cannot wait for; set "
                      "parallel.update = sync, or sync: false on the batch norms"),
    // The hardware catalogue's cluster (core/io/hardware_catalogue.cpp).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "simulation.cluster.node %1 holds %2 devices but simulation.profile is %3; "
                      "set simulation.profile to %4 or choose a node type that holds %5"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "simulation.cluster has %1 nodes x %2 devices = %3 but the run needs %4 (dp x tp x cp x "
        "pp); raise simulation.cluster.nodes to %5 or set it to 0 (as many as needed)"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "simulation.cluster has %1 node x %2 devices = %3 but the run needs %4 (dp x tp x cp x "
        "pp); raise simulation.cluster.nodes to %5 or set it to 0 (as many as needed)"),
    // What a run needs before it starts (core/runtime).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "backend.type = %1 does not run across processes yet; use backend.type = cpu "
                      "(or cuda) under mpirun"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "backend.type = cuda, but this build has no CUDA backend; use backend.type = cpu"),
    QT_TRANSLATE_NOOP("CoreMessage", "backend.type = %1 is not a backend; registered: %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "steps = %1 must be >= 0 (0 runs training.steps)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "backend.type = %1: Transformers train on the cpu and cuda backends; set "
                      "backend.type = cpu or cuda, or simulate this model"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "model.loss = %1: a Transformer trains on next-token cross-entropy; set model.loss = %2"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "training.precision = %1: the %2 executor trains in fp32 only (the simulator predicts "
        "bf16-mixed); set training.precision = fp32 to train, or backend.type = cuda"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 routes tokens to experts, which context parallelism does not train yet; "
                      "set parallel.cp = 1, or simulate"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is %2: a Transformer starts with an embedding; make model.layers[0] an embedding"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is %2: convolutional layers and batch norm train on the cpu and cuda "
                      "backends; set backend.type = cpu or cuda, or simulate this model"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is moe: Mixture-of-Experts layers train on the cpu and cuda backends; "
                      "set backend.type = cpu or cuda, or simulate this model"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "%1 is a transformer_block with experts: Mixture-of-Experts layers train on the cpu and "
        "cuda backends; set backend.type = cpu or cuda, or simulate this model"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "model.input gives %1 features but %2 has %3; set model.input to [%4]"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the model outputs %1 values but %2 has %3 classes; set the last linear layer's out to %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is a regression set (no class labels), which model.loss = cross-entropy "
                      "cannot train; use model.loss = mse"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the model outputs %1 values but %2 has %3 targets per sample; set the last "
                      "linear layer's out to %4"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "training.batch_size = %1 must be a multiple of parallel.dp x "
                      "parallel.microbatches = %2 x %3"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "throughput needs a device: simulation.profile = unit has no FLOP/s; name a "
                      "device such as h100"),
    // The planners and the split search (core/planner).
    QT_TRANSLATE_NOOP("CoreMessage",
                      "DAPPLE's planner would try %1 (pp, dp, micro-batch) choices; plan for fewer "
                      "devices, use a batch size with fewer divisors, or use --planner pipedream"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "no pp, dp and micro-batch count splits training.batch_size = %1 over %2 "
                      "devices into a valid experiment; change the batch size or the model"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "only a sequence model (an embedding, then transformer blocks) has a "
                      "Megatron-LM or torchtitan equivalent; this model starts with a %1 layer"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "layer %1 (%2) has no place in a Megatron-LM or torchtitan GPT, which is an "
                      "embedding, transformer blocks, a final norm and the output layer"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the model has no transformer_block; Megatron-LM and torchtitan train GPTs "
                      "of transformer blocks"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "PipeDream's planner would search too long over %1 layers and %2 device groups; plan for "
        "at most %3 groups of parallel.tp devices, raise parallel.tp, or use --planner dapple"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the plan needs at least 1 device, got %1; give the number of devices to plan for"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 devices is not a multiple of %2 (each stage replica takes tp x cp "
                      "devices); use a multiple of %3 or change tp or cp"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 devices is not a multiple of %2 (each stage replica takes tp devices); "
                      "use a multiple of %3 or change parallel.tp"),
    QT_TRANSLATE_NOOP("CoreMessage", "memory per device must be above 0 bytes, e.g. 16GiB"),
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "the link bandwidth must be a number of bytes per second above 0, e.g. 450GB"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "simulation.profile = unit counts no bytes or seconds, so there is nothing "
                      "to plan with; set simulation.profile to cpu-core, h100 or h200"),
    QT_TRANSLATE_NOOP("CoreMessage", "the search needs at least 1 device, got %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "memory per device must be above 0 bytes, e.g. 80GB"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the memory margin is a share of each device's memory kept free, at least 0 "
                      "and below 1 (e.g. 0.1)"),
    QT_TRANSLATE_NOOP("CoreMessage", "the search must return at least 1 plan"),
    QT_TRANSLATE_NOOP("CoreMessage", "a node must hold at least 1 device"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "simulation.profile = unit counts no bytes or seconds, so there is nothing "
                      "to search with; set simulation.profile to a device such as h100"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the search covers synchronous training; set parallel.update = sync and a "
                      "synchronous schedule (e.g. 1f1b) first"),
    // A --search-space value (core/planner/split_search.cpp): the place, then why.
    QT_TRANSLATE_NOOP("CoreMessage", "search space %1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "write dimension=value,value, e.g. cp=1 or schedule=1f1b,zb-v"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not a whole number from 0 to 3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not a whole number of at least 1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is not a schedule the search tries; valid: 1f1b, interleaved-1f1b, "
                      "zb-h1, zb-v, dualpipev"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 is not an offload; valid: none, activations, optimizer"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "%1 is not a recompute policy; valid: none, selective, full, block"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "no dimension %1; valid: tp, cp, pp, dp, ep, zero, schedule, recompute, "
                      "offload, microbatches"),
    QT_TRANSLATE_NOOP("CoreMessage", "the search was stopped before it finished"),
    QT_TRANSLATE_NOOP("CoreMessage", "fix the experiment first: %1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the model has %1 layers; the planners search every layer range and take at "
                      "most %2 (use repeat to merge layers into fewer, larger ones)"),
    // Calibration from saved runs (core/cli).
    QT_TRANSLATE_NOOP(
        "CoreMessage",
        "no split of the experiment fits %1 usable per device, so there is nothing to write or "
        "export; give more devices, more memory per device or a smaller --margin"),
    QT_TRANSLATE_NOOP("CoreMessage", "calibration run failed: %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "calibration needs at least one run file"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "run '%1' was %2, not measured: calibrate from runs that trained "
                      "(pipelab-cli train --save-run, or the app's Runs > Save)"),
    QT_TRANSLATE_NOOP("CoreMessage", "run '%1' recorded no steps to calibrate from"),
    // Attaching to a run's live stream (pipelab --attach; core/live): the
    // address, the stream, and what a frame held that its run cannot have
    // ("the run sent" it).
    QT_TRANSLATE_NOOP("CoreMessage", "--attach %1: write HOST:PORT (e.g. localhost:7300)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "--attach %1: %2 (is pipelab-cli train --serve running there, and does its "
                      "--serve-allow list you?)"),
    QT_TRANSLATE_NOOP("CoreMessage", "--attach %1: %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "not a PipeLab run's live stream (or it refused us)"),
    QT_TRANSLATE_NOOP("CoreMessage", "the experiment it sent does not read: %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "the experiment it sent is not valid: %1"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "the run streams another PipeLab build's events; attach with the same build"),
    QT_TRANSLATE_NOOP("CoreMessage", "the run says it trains %1 steps"),
    QT_TRANSLATE_NOOP("CoreMessage", "the run ended in state %1, which is not an end"),
    QT_TRANSLATE_NOOP("CoreMessage", "the run sent %1"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 on device %2, but its experiment has %3 devices"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 at a time that is not a finite number"),
    QT_TRANSLATE_NOOP("CoreMessage", "an event of kind %1, which is not an op kind"),
    QT_TRANSLATE_NOOP("CoreMessage", "an event of group %1, which is not a group"),
    QT_TRANSLATE_NOOP("CoreMessage", "an event that ends before it begins"),
    QT_TRANSLATE_NOOP("CoreMessage", "a memory sample of %1 bytes in one category"),
    QT_TRANSLATE_NOOP("CoreMessage", "an expert load with %1 routed counts but %2 dropped ones"),
    QT_TRANSLATE_NOOP("CoreMessage", "an event"),
    QT_TRANSLATE_NOOP("CoreMessage", "a memory sample"),
    QT_TRANSLATE_NOOP("CoreMessage", "a step's metrics"),
    // The general forms of range checks, last: any field, any bound.
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be >= %2, got %3"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 is more than the %3 PipeLab plans; use at most %4"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 must be in [0, 1)"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 must be in [0, 1), got %2"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 = %2 must be >= 0"),
    // Values that carry words of their own, translated where they stand in
    // another message (core_message_text translates every value it can):
    // the text source's counts and sample window, the sequence tasks' reasons.
    QT_TRANSLATE_NOOP("CoreMessage", "%1 characters"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 character"),
    QT_TRANSLATE_NOOP("CoreMessage", "%1 (data.sequence_length %2 + 1 for the last label)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "(a 1-symbol question, the separator and a 1-symbol answer make 3 tokens, "
                      "and the inputs are all but the last)"),
    QT_TRANSLATE_NOOP("CoreMessage", "(4 special tokens and 2 symbols)"),
    QT_TRANSLATE_NOOP("CoreMessage",
                      "(1-digit numbers: a + b = and a 2-digit sum make 6 tokens, and the inputs "
                      "are all but the last)"),
    QT_TRANSLATE_NOOP("CoreMessage", "(4 special tokens and the digits 0-9)"),
};

struct Pattern {
  const char* english;
  QRegularExpression match;  // the English with each %N as a capture
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> compiled = [] {
    std::vector<Pattern> list;
    static const QRegularExpression placeholder(QStringLiteral("%\\d"));
    for (const char* english : kPatterns) {
      QStringList parts = QString::fromUtf8(english).split(placeholder);
      for (QString& part : parts) part = QRegularExpression::escape(part);
      list.push_back(
          {english, QRegularExpression(QStringLiteral("^") + parts.join(QStringLiteral("(.*?)")) +
                                       QStringLiteral("$"))});
    }
    return list;
  }();
  return compiled;
}

// A value inside a message: a number, a name or a field stays as it is; one
// with words of its own that a pattern knows ("12 characters") is translated.
QString value_text(const QString& value) {
  const bool has_letters =
      std::any_of(value.begin(), value.end(), [](QChar c) { return c.isLetter(); });
  if (!has_letters) return value;
  return core_message_text(value);
}

}  // namespace

QString core_message_text(const QString& english) {
  // A file's first problem with how many more follow (core/io/file_text.cpp):
  // the problem in the app's language, then the count.
  static const QRegularExpression more(QStringLiteral("^(.+) \\(and (\\d+) more problems?\\)$"));
  if (const QRegularExpressionMatch found = more.match(english); found.hasMatch()) {
    const int count = found.captured(2).toInt();
    return QCoreApplication::translate("CoreMessage", "%1 (and %n more problem(s))", nullptr, count)
        .arg(core_message_text(found.captured(1)));
  }
  // A run's failure with the op that was running (core/runtime's
  // device_worker): the failure in the app's language, then the op's label.
  static const QRegularExpression during(QStringLiteral("^(.+) \\(during ([^()]+)\\)$"));
  if (const QRegularExpressionMatch found = during.match(english); found.hasMatch())
    return QCoreApplication::translate("CoreMessage", "%1 (during %2)")
        .arg(core_message_text(found.captured(1)), found.captured(2));
  // A file, a device or a node before the problem in it (a hardware file's
  // "simulation.profile: mine.json: device 'h100': memory_gb = 0 ...", a CSV file's
  // "data.csv: line 3, column 2: 'x' is not a number", a --search-space value's
  // "search space 'cp=x': ..."): the place first, each part in the
  // app's language, so no pattern's %1 swallows it.
  static const QRegularExpression place(
      QStringLiteral("^((?:simulation\\.profile(?:'s node)?|[^:]+\\.json|device '[^']*'|node "
                     "'[^']*'|(?:.+?: )?line \\d+, column \\d+|search space '.*?')): (.+)$"));
  if (const QRegularExpressionMatch found = place.match(english); found.hasMatch())
    return core_message_text(found.captured(1)) + QStringLiteral(": ") +
           core_message_text(found.captured(2));
  // A saved run whose experiment does not validate (core/io/run_file.cpp):
  // the problem in the app's language, then why a run file cannot hold it.
  static const QRegularExpression run_experiment(QStringLiteral(
      "^(.+) \\(a run file holds the valid experiment it ran; save the run again\\)$"));
  if (const QRegularExpressionMatch found = run_experiment.match(english); found.hasMatch())
    return QCoreApplication::translate(
               "CoreMessage",
               "%1 (a run file holds the valid experiment it ran; save the run again)")
        .arg(core_message_text(found.captured(1)));
  // A run's failure on one device (its backend's failure_message): the
  // device, then the error in the app's language.
  static const QRegularExpression device(QStringLiteral("^device (\\d+): (.+)$"));
  if (const QRegularExpressionMatch found = device.match(english); found.hasMatch())
    return QCoreApplication::translate("CoreMessage", "device %1: %2")
        .arg(found.captured(1), core_message_text(found.captured(2)));
  for (const Pattern& pattern : patterns()) {
    const QRegularExpressionMatch match = pattern.match.match(english);
    if (!match.hasMatch()) continue;
    // One pass over the translation, so a value holding "%" stays as it is.
    const QString translation = QCoreApplication::translate("CoreMessage", pattern.english);
    static const QRegularExpression placeholder(QStringLiteral("%(\\d)"));
    QString text;
    qsizetype done = 0;
    for (auto it = placeholder.globalMatch(translation); it.hasNext();) {
      const QRegularExpressionMatch found = it.next();
      text += translation.mid(done, found.capturedStart() - done);
      text += value_text(match.captured(found.captured(1).toInt()));
      done = found.capturedEnd();
    }
    return text + translation.mid(done);
  }
  // Where a problem is (a file, a field, a device in a hardware file) before
  // what it is: "mine.json: device 'h100': memory_gb = 0 must be ...". The
  // place stays as written (or its own pattern, "device '%1'"), the rest is translated.
  if (const qsizetype colon = english.indexOf(QLatin1String(": ")); colon > 0) {
    const QString rest = english.mid(colon + 2);
    const QString translated = core_message_text(rest);
    if (translated != rest)
      return core_message_text(english.left(colon)) + QStringLiteral(": ") + translated;
  }
  return english;
}

}  // namespace pipelab
