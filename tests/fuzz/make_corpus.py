#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus under tests/fuzz/corpus/ from the
examples and from files like the ones the data tests generate. Run it again
after adding an example; the files it writes are committed."""
import gzip
import json
import pathlib
import shutil
import struct

here = pathlib.Path(__file__).resolve().parent
corpus = here / "corpus"
examples = here.parent.parent / "examples"


def write(target, name, data):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_labels(labels):
    return struct.pack(">II", 0x801, len(labels)) + bytes(labels)


def idx_images(count, rows, cols):
    pixels = bytes((i * 37 + 11) % 256 for i in range(count * rows * cols))
    return struct.pack(">IIII", 0x803, count, rows, cols) + pixels


def idx_input(labels, images, mnist):
    # idx_fuzz: labels length (2 bytes, little-endian), a flags byte, labels, images.
    return struct.pack("<HB", len(labels), 1 if mnist else 0) + labels + images


shutil.rmtree(corpus, ignore_errors=True)

for example in sorted(examples.glob("*.json")):
    write("experiment_fuzz", example.name, example.read_bytes())
# Huge numbers in a synthetic data section reach the memory pre-flight.
write("experiment_fuzz", "huge_synthetic_samples.json",
      '{"data": {"source": "blobs", "samples": 4611686018427387904, "features": 1000}, '
      '"model": {"input": [1000], "layers": [{"type": "linear", "out": 3}]}}')

# A run placed on nodes of the hardware catalogue reaches placement and the
# collectives' algorithms.
on_cluster = json.loads((examples / "dp_ring_allreduce.json").read_text())
on_cluster["simulation"] = {"profile": "h100", "cluster": {"node": "dgx-h100", "nodes": 1},
                            "overlap_grad_reduce": False}
write("experiment_fuzz", "dp_on_a_cluster.json", json.dumps(on_cluster, indent=1) + "\n")

overrides = {
    "pipeline": "parallel.pp=4\nparallel.microbatches=8",
    "width": "model.layers.0.out=64",
    "schedule": "parallel.schedule=gpipe",
    "explicit": "parallel.partition=[2, 4]",
    "layers": 'model.layers=[{"type": "linear", "out": 8}, {"type": "gelu"}, {"type": "linear", "out": 3}]',
    "regression": "data.source=teacher\ndata.classes=0\nmodel.loss=mse\nmodel.layers.6.out=1",
    "async": "parallel.update=async\nparallel.dp=2\nparallel.staleness=1",
    "zero": "parallel.pp=1\nparallel.dp=2\nparallel.zero=3",
    "context": "parallel.cp=2\nparallel.dp=2",
    "interleaved": "parallel.schedule=interleaved-1f1b\nparallel.chunks=2\nparallel.microbatches=4",
    "tensor": "parallel.tp=2\nparallel.dp=2\ntraining.batch_size=64",
    "optimizer": 'training.optimizer={"type": "adamw", "lr": 0.001, "weight_decay": 0.01}',
    "zero_bubble": "parallel.schedule=zb-h1\nsimulation.profile=unit\nsimulation.unit.w=0.5",
    "pipedream": "parallel.schedule=pipedream-2bw\nparallel.microbatches=4",
    "convolution": 'model.input=[2, 1, 1]\nmodel.layers=[{"type": "conv2d", "out": 4, "kernel": 1}, '
                   '{"type": "batchnorm", "sync": true}, {"type": "maxpool", "kernel": 1}, {"type": "flatten"}, '
                   '{"type": "linear", "out": 3}]',
    "data": "data.source=csv\ndata.path=data.csv\nmodel.input=[4]",
    "brackets": "model.layers[1].type=dropout",
}
for name, text in overrides.items():
    write("set_override_fuzz", name, text)

labels = bytes([0, 1, 2])
write("idx_fuzz", "raw", idx_input(idx_labels(labels), idx_images(3, 2, 2), False))
write("idx_fuzz", "gzip", idx_input(gz(idx_labels(labels)), gz(idx_images(3, 2, 2)), False))
write("idx_fuzz", "mnist", idx_input(gz(idx_labels(bytes([7, 2]))), gz(idx_images(2, 28, 28)), True))
three_d = struct.pack(">IIIII", 0x804, 2, 2, 2, 2) + bytes(16)  # 3 dimensions per image
write("idx_fuzz", "three_dims", idx_input(idx_labels(bytes([1, 0])), three_d, False))
write("idx_fuzz", "concatenated_gzip",
      idx_input(gz(idx_labels(labels[:1])) + gz(labels[1:]), idx_images(3, 1, 1), False))

csv_files = {
    "plain": "1,0.5,-2\n0,3,4e-1\n2,+1,0\n",
    "header": '\ufeff"label","x","y"\r\n1, 2 ,3\r\n\r\n0,"4",5\r\n\n',
    "last_column": "x,y,class\n0.5,1.5,1\n2.5,3.5,0\n",
    "not_finite": "1,2\n0,inf\n",
    "ragged": "1,2,3\n0,1\n",
}
for name, text in csv_files.items():
    write("csv_fuzz", name, b"\x04" + text.encode())  # byte 0: label column 0
write("csv_fuzz", "gzip", b"\x03" + gz(csv_files["last_column"].encode()))  # column -1

# Text corpora: byte 0 picks the sequence length (1 + b % 8), byte 1 the stride
# (low bits) and the validation fraction (high bits / 16).
text_files = {
    "ascii": b"\x03\x20" + b"the quick brown fox jumps over the lazy dog\n" * 3,
    "utf8": b"\x04\x10" + "流水线并行：前向、反向、更新。\n".encode() * 4,
    "bom": b"\x01\x11" + b"\xef\xbb\xbfab\r\ncd\r\nef\r\n",
    "invalid_utf8": b"\x02\x20" + b"ok \xc3\x28 not ok",
}
for name, data in text_files.items():
    write("text_corpus_fuzz", name, data)
write("text_corpus_fuzz", "gzip", b"\x05\x30" + gz(b"a gzip-compressed corpus of a few words\n" * 4))

folders = {
    "mnist": "train-images-idx3-ubyte.gz\ntrain-labels-idx1-ubyte.gz\n"
             "t10k-images-idx3-ubyte.gz\nt10k-labels-idx1-ubyte.gz",
    "one_pair": "t10k-images-idx3-ubyte\nt10k-labels-idx1-ubyte\nREADME",
    "both_forms": "x-images-idx3-ubyte\nx-images-idx3-ubyte.gz\nx-labels-idx1-ubyte.gz",
    "emnist": "emnist-letters-train-images-idx3-ubyte\nemnist-letters-train-labels-idx1-ubyte",
    "missing_labels": "train-images-idx3-ubyte.gz",
}
for name, text in folders.items():
    write("idx_folder_fuzz", name, b"\x01" + text.encode())

command_lines = {
    "schedule": "schedule --schedule 1f1b --stages 4 --microbatches 8",
    "interleaved": "schedule --schedule interleaved-1f1b --stages 2 --microbatches 4 --chunks 2 --format json",
    "simulate": "simulate --schedule zb-h1 --stages 4 --microbatches 8 --cost f=1,b=1,w=1,comm=0",
    "data_parallel": "simulate --schedule gpipe --stages 2 --microbatches 2 --dp 2 --tp 2 --recompute",
    "async": "simulate --schedule 1f1b --stages 2 --microbatches 2 --dp 2 --update async --staleness 1",
    "pipedream": "simulate --schedule pipedream --stages 3 --microbatches 3 --steps 4",
    "inline_value": "schedule --schedule=gpipe --stages=2 --microbatches=1",
    "help": "--help",
}
for name, line in command_lines.items():
    write("cli_args_fuzz", name, "\n".join(line.split(" ")))

# A small saved run (core/io/run_file.h) around an example's experiment, on
# the two devices its plan has (a run file's devices are its plan's): a
# forward and a data-parallel all-reduce, a memory sample, two steps.
two_stages = json.loads((examples / "mnist_mlp_1f1b.json").read_text())
two_stages["parallel"]["pp"] = 2
run = {
    "format": "pipelab-run", "version": 1, "name": "1 · 1f1b · seed",
    "experiment": two_stages,
    "trace": {
        "source": "measured", "time_unit": "s", "schedule": "1f1b",
        "devices": [{"device": d, "replica": 0, "pipeline_rank": d, "shard": 0, "stages": [d],
                     "label": f"device {d} · stage {d} · replica 0"} for d in range(2)],
        "event_columns": ["device", "kind", "stage", "chunk", "microbatch", "step", "weight_version",
                          "weight_delay", "peer", "group", "layer", "op_bytes", "t_begin", "t_end",
                          "bytes"],
        "events": [[0, "F", 0, 0, 0, 0, 0, 0, -1, "none", -1, 0, 0.001, 0.002, 0],
                   [1, "ALLREDUCE", 1, 0, -1, 0, 0, 0, -1, "data_parallel", -1, 64, 0.002, 0.003, 64]],
        "memory_columns": ["device", "t", "weights", "gradients", "optimizer_state", "activations",
                           "stashed_weights", "comm_buffers", "workspace", "host"],
        "memory": [[0, 0.0015, 0, 0, 0, 4096, 0, 0, 0, 0]],
        "steps": [{"step": s, "t_end": 0.003 * (s + 1), "loss": 2.3 - 0.2 * s, "accuracy": None,
                   "step_time_s": 0.003, "samples_per_s": 1000.0, "bubble_measured": None}
                  for s in range(2)],
    },
}
write("run_file_fuzz", "small_run.json", json.dumps(run, ensure_ascii=False, indent=1))

# The same around the Mixture-of-Experts example: an expert-parallel
# all-to-all, and steps with the moe layers' load.
moe_run = json.loads(json.dumps(run))
moe_run["experiment"] = json.loads((examples / "moe_switch_copy.json").read_text())
moe_run["experiment"]["parallel"].update({"dp": 2, "ep": 2})
moe_run["trace"]["events"].append(
    [1, "ALL_TO_ALL", 1, 0, 0, 0, 0, 0, -1, "expert_parallel", 2, 512, 0.0021, 0.0022, 256])
for step in moe_run["trace"]["steps"]:
    step["aux_loss"] = 0.0125
    step["expert_load"] = [{"layer": 2, "routed": [300, 200, 280, 244], "dropped": [20, 0, 8, 0]}]
write("run_file_fuzz", "small_moe_run.json", json.dumps(moe_run, ensure_ascii=False, indent=1))
