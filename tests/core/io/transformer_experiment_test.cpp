// Transformer experiments in files: the new layer fields, repeat, precision,
// sequence parallelism, recompute modes, and the errors a user can make.
#include <gtest/gtest.h>

#include <string>

#include "core/io/experiment_io.h"
#include "core/io/experiment_json.h"
#include "core/model/model_spec.h"

namespace pipelab {
namespace {

Json tiny_gpt_document() {
  return Json::parse(R"({
    "name": "tiny GPT",
    "model": {"input": [32], "layers": [
      {"type": "embedding", "vocab": 64, "dim": 48},
      {"type": "transformer_block", "heads": 4, "repeat": 3},
      {"type": "transformer_block", "heads": 4, "norm": "rmsnorm", "activation": "swiglu", "ffn": 96,
       "causal": false, "dropout": 0.1, "bias": false},
      {"type": "layernorm"},
      {"type": "linear", "out": 64}
    ]},
    "data": {"source": "text", "path": "LICENSE"},
    "training": {"batch_size": 8, "precision": "bf16-mixed"},
    "parallel": {"tp": 2, "pp": 2, "microbatches": 4, "sequence_parallel": true, "recompute": "selective"}
  })");
}

std::string error_of(const Json& document) {
  try {
    const Experiment experiment = parse_experiment(document.dump());
    const auto problems = validate_experiment(experiment);
    return problems.empty() ? "no error" : problems.front();
  } catch (const ExperimentError& error) {
    return error.what();
  }
}

TEST(TransformerExperiment, ReadsEveryFieldAndExpandsRepeats) {
  const Experiment experiment = parse_experiment(tiny_gpt_document().dump());
  EXPECT_TRUE(validate_experiment(experiment).empty()) << validate_experiment(experiment).front();
  const auto& layers = experiment.model.layers;
  ASSERT_EQ(layers.size(), 7u);  // embedding, 3 + 1 blocks, norm, linear
  EXPECT_EQ(layers[0].vocab, 64);
  EXPECT_EQ(layers[0].dim, 48);
  EXPECT_TRUE(layers[1] == layers[3]);
  EXPECT_EQ(layers[4].norm, NormType::RmsNorm);
  EXPECT_EQ(layers[4].activation, BlockActivation::SwiGlu);
  EXPECT_EQ(layers[4].ffn, 96);
  EXPECT_FALSE(layers[4].causal);
  EXPECT_DOUBLE_EQ(layers[4].dropout, 0.1);
  EXPECT_FALSE(layers[4].bias);
  EXPECT_EQ(experiment.training.precision, Precision::Bf16Mixed);
  EXPECT_TRUE(experiment.parallel.sequence_parallel);
  EXPECT_TRUE(experiment.parallel.selective_recompute);
  EXPECT_FALSE(experiment.parallel.recompute);
}

TEST(TransformerExperiment, SavingWritesRepeatsBackAndReadsTheSame) {
  const Experiment experiment = parse_experiment(tiny_gpt_document().dump());
  const Json saved = Json::parse(experiment_to_json(experiment));
  ASSERT_EQ(saved["model"]["layers"].size(), 5u);
  EXPECT_EQ(saved["model"]["layers"][1]["repeat"], 3);
  EXPECT_EQ(saved["parallel"]["recompute"], "selective");
  const Experiment again = parse_experiment(saved.dump());
  EXPECT_EQ(again.model.layers, experiment.model.layers);
  EXPECT_EQ(again.training.precision, Precision::Bf16Mixed);
}

TEST(TransformerExperiment, RecomputeTakesBooleansAndModeNames) {
  for (const auto& [value, full, selective] :
       {std::tuple{Json(true), true, false}, std::tuple{Json(false), false, false},
        std::tuple{Json("full"), true, false}, std::tuple{Json("none"), false, false},
        std::tuple{Json("selective"), false, true}, std::tuple{Json("block"), true, false}}) {
    Json document = tiny_gpt_document();
    document["parallel"]["recompute"] = value;
    const Experiment experiment = parse_experiment(document.dump());
    EXPECT_EQ(experiment.parallel.recompute, full) << value;
    EXPECT_EQ(experiment.parallel.selective_recompute, selective) << value;
    EXPECT_EQ(experiment.parallel.recompute_blocks, value == Json("block")) << value;
    // Saved and read back, each keeps its unit.
    const Experiment again = parse_experiment(experiment_to_json(experiment));
    EXPECT_EQ(again.parallel.recompute, full) << value;
    EXPECT_EQ(again.parallel.recompute_blocks, value == Json("block")) << value;
  }
  // Blocks rebuilt in groups (--recompute-num-layers): kept through a save,
  // refused below 1 and without block recomputation.
  Json grouped = tiny_gpt_document();
  grouped["parallel"]["recompute"] = "block";
  grouped["parallel"]["recompute_layers"] = 2;
  const Experiment experiment = parse_experiment(grouped.dump());
  EXPECT_EQ(experiment.parallel.recompute_layers, 2);
  EXPECT_EQ(parse_experiment(experiment_to_json(experiment)).parallel.recompute_layers, 2);
  grouped["parallel"]["recompute_layers"] = 0;
  EXPECT_NE(error_of(grouped).find("parallel.recompute_layers = 0 must be at least 1"),
            std::string::npos);
  grouped["parallel"]["recompute_layers"] = 2;
  grouped["parallel"]["recompute"] = true;
  EXPECT_NE(error_of(grouped).find("set recompute = \"block\", or remove recompute_layers"),
            std::string::npos)
      << error_of(grouped);
}

TEST(TransformerExperiment, MistakesAreNamedWithTheFix) {
  const auto with = [](auto edit) {
    Json document = tiny_gpt_document();
    edit(document);
    return error_of(document);
  };
  EXPECT_NE(with([](Json& d) { d["parallel"]["recompute"] = "some"; })
                .find("parallel.recompute must be false, true"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["training"]["precision"] = "fp16"; }).find("training.precision"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["model"]["layers"][1]["norm"] = "batchnorm"; }).find("model.layers[1].norm"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["model"]["layers"][1]["activation"] = "relu"; })
                .find("model.layers[1].activation"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["model"]["layers"][1]["repeat"] = 0; })
                .find("model.layers[1].repeat = 0; repeat a layer 1 to"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["model"]["layers"][1]["repeat"] = 20000; }).find("repeat a layer 1 to 10000"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["model"]["layers"][0]["heads"] = 4; }).find("heads"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["parallel"]["tp"] = 1; }).find("sequence_parallel"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["data"] = Json::parse(R"({"source": "spiral"})"); })
                .find("gives feature vectors; use data.source = text"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["parallel"]["tp"] = 8; }).find("tp = 8 does not divide"), std::string::npos);
  // The length a sequence set's samples have is the model's input width.
  for (const char* key : {"sequence_length", "seq_len"})
    EXPECT_NE(with([key](Json& d) { d["data"][key] = 32; }).find("set model.input = [N] for N tokens"),
              std::string::npos)
        << key;
}

// A Switch-style GPT: the first block dense, the second's MLP 4 experts.
Json expert_gpt_document() {
  return Json::parse(R"({
    "model": {"input": [16], "layers": [
      {"type": "embedding", "vocab": 16, "dim": 32},
      {"type": "transformer_block", "heads": 4},
      {"type": "transformer_block", "heads": 4, "ffn": 64, "experts": 4, "top_k": 2,
       "capacity_factor": 1.5, "aux_loss_weight": 0.02},
      {"type": "layernorm"},
      {"type": "linear", "out": 16}
    ]},
    "data": {"source": "copy", "vocab": 16},
    "training": {"batch_size": 16},
    "parallel": {"dp": 2, "ep": 2, "microbatches": 2}
  })");
}

TEST(TransformerExperiment, ABlocksExpertsAreReadCheckedAndWrittenBack) {
  const Experiment experiment = parse_experiment(expert_gpt_document().dump());
  EXPECT_TRUE(validate_experiment(experiment).empty()) << validate_experiment(experiment).front();
  const LayerSpec& block = experiment.model.layers[2];
  EXPECT_EQ(block.experts, 4);
  EXPECT_EQ(block.top_k, 2);
  EXPECT_DOUBLE_EQ(block.capacity_factor, 1.5);
  EXPECT_DOUBLE_EQ(block.aux_loss_weight, 0.02);
  const Json saved = Json::parse(experiment_to_json(experiment));
  EXPECT_FALSE(saved["model"]["layers"][1].contains("experts"));  // a dense block stays as it was
  EXPECT_EQ(saved["model"]["layers"][2]["experts"], 4);
  EXPECT_EQ(parse_experiment(saved.dump()).model.layers, experiment.model.layers);

  const auto with = [](auto edit) {
    Json document = expert_gpt_document();
    edit(document);
    return error_of(document);
  };
  // Each expert's FFN is split over tp like the dense MLP, inside each expert-parallel member.
  EXPECT_EQ(with([](Json& d) { d["parallel"]["tp"] = 2; }), "no error");
  // Under sequence parallelism a block, and a moe layer, gathers the
  // sequence before routing it, on either backend.
  EXPECT_EQ(with([](Json& d) {
              d["parallel"]["tp"] = 2;
              d["parallel"]["sequence_parallel"] = true;
            }),
            "no error");
  for (const char* backend : {"cpu", "cuda"})
    EXPECT_EQ(with([backend](Json& d) {
                d["backend"]["type"] = backend;
                d["parallel"]["tp"] = 2;
                d["parallel"]["sequence_parallel"] = true;
                d["model"]["layers"].insert(d["model"]["layers"].begin() + 3,
                                            Json::parse(R"({"type": "moe", "experts": 4, "ffn": 64})"));
              }),
              "no error")
        << backend;
  EXPECT_NE(with([](Json& d) {
              d["parallel"]["tp"] = 2;
              d["model"]["layers"][2]["ffn"] = 63;
            }).find("tp = 2 does not divide transformer_block layer"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["model"]["layers"][2]["top_k"] = 5;
            }).find("transformer_block top_k = 5 must be in [1, experts = 4]"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["model"]["layers"][2]["experts"] = -1;
            }).find("transformer_block experts must be >= 0 (0: a dense MLP)"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["model"]["layers"][2]["activation"] = "swiglu";
            }).find("a transformer_block with experts has GELU experts; set activation = gelu"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["parallel"]["dp"] = 8;
              d["parallel"]["ep"] = 8;
            }).find("model.layers[2] has 4 experts, which parallel.ep = 8 cannot share out evenly"),
            std::string::npos);
}

TEST(TransformerExperiment, SequenceTasksMustFitTheModelsEnds) {
  const auto with = [](auto edit) {
    Json document = tiny_gpt_document();
    document["data"] = Json::parse(R"({"source": "copy", "vocab": 64, "samples": 256})");
    edit(document);
    return error_of(document);
  };
  EXPECT_EQ(with([](Json&) {}), "no error");
  EXPECT_NE(with([](Json& d) { d["data"]["vocab"] = 32; })
                .find("the model outputs 64 values per position but data.source 'copy' has a vocabulary of 32 "
                      "tokens (data.vocab); set the last linear layer's out to 32"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["data"]["vocab"] = 80;
              d["model"]["layers"][4]["out"] = 80;
            }).find("the embedding's vocab = 64 is smaller than data.vocab = 80"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["data"]["vocab"] = 0; }).find("data.vocab must be >= 1"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["data"] = Json::parse(R"({"source": "text"})"); })
                .find("a UTF-8 text file: give its path"),
            std::string::npos);
  // The fields survive a save.
  Json document = tiny_gpt_document();
  document["data"] = Json::parse(R"({"source": "text", "path": "LICENSE", "stride": 7})");
  const Experiment experiment = parse_experiment(document.dump());
  EXPECT_EQ(parse_experiment(experiment_to_json(experiment)).data.stride, 7);
}

TEST(TransformerExperiment, FeatureModelsRefuseSequenceOnlySettings) {
  const Json mlp = Json::parse(R"({
    "model": {"input": [2], "layers": [{"type": "linear", "out": 8}, {"type": "relu"}, {"type": "linear", "out": 3}]},
    "data": {"source": "spiral"},
    "parallel": {"tp": 2}
  })");
  Json selective = mlp;
  selective["parallel"]["recompute"] = "selective";
  EXPECT_NE(error_of(selective).find("this model has none"), std::string::npos);
  Json block = mlp;
  block["parallel"]["recompute"] = "block";
  EXPECT_NE(error_of(block).find(
                "parallel.recompute = \"block\" keeps each Transformer block's input, and this "
                "model has none"),
            std::string::npos);
  Json sequence = mlp;
  sequence["parallel"]["sequence_parallel"] = true;
  EXPECT_NE(error_of(sequence).find("needs a Transformer"), std::string::npos);
  Json tokens = mlp;
  tokens["data"] = Json::parse(R"({"source": "copy"})");
  EXPECT_NE(error_of(tokens).find("gives token sequences"), std::string::npos);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

int64_t total_params(const std::string& example) {
  const ModelSpec model = load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/" + example).model;
  int64_t params = 0;
  for (const LayerInfo& info : describe_layers(model)) params += info.params;
  return params;
}

// Meta's released checkpoints: LLaMA 2 70B has 68,976,648,192 parameters and
// LLaMA 3 8B 8,030,261,248 (untied embeddings, RMSNorm; the examples' final
// layernorm adds a bias of one width, 8,192 or 4,096 values).
TEST(TransformerSpec, GroupedQueryAttentionAndRotaryPositionsCountLlamasParameters) {
  EXPECT_EQ(total_params("llama_70b_predict.json"), 68'976'648'192 + 8'192);
  EXPECT_EQ(total_params("llama3_8b_predict.json"), 8'030'261'248 + 4'096);
}

TEST(TransformerExperiment, KvHeadsAndPositionsReadAndWrite) {
  Json document = tiny_gpt_document();
  document["model"]["layers"][0]["position"] = "rope";
  document["model"]["layers"][1]["kv_heads"] = 2;
  const Experiment experiment = parse_experiment(document.dump());
  EXPECT_EQ(experiment.model.layers[0].position, PositionEncoding::Rope);
  EXPECT_EQ(experiment.model.layers[1].kv_heads, 2);
  const Experiment again = parse_experiment(experiment_to_json(experiment));
  EXPECT_EQ(again.model.layers[0].position, PositionEncoding::Rope);
  EXPECT_EQ(again.model.layers[1].kv_heads, 2);
  // A tensor-parallel shard holds whole key/value heads.
  document["parallel"]["tp"] = 4;
  try {
    parse_experiment(document.dump());
    ADD_FAILURE() << "tp 4 over 2 kv_heads was accepted";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("tp = 4 does not divide transformer_block layer"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("kv_heads = 2"), std::string::npos) << error.what();
  }
  document["parallel"]["tp"] = 1;
  document["model"]["layers"][0]["position"] = "alibi";
  try {
    parse_experiment(document.dump());
    ADD_FAILURE() << "position alibi was accepted";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("learned, rope"), std::string::npos) << error.what();
  }
}

// rope_theta, the rotary base: read, written back only when not 10000, and
// refused where it cannot mean anything.
TEST(TransformerExperiment, RopeThetaReadsWritesAndIsChecked) {
  Json document = tiny_gpt_document();
  document["model"]["layers"][0]["position"] = "rope";
  document["model"]["layers"][0]["rope_theta"] = 500000;
  const Experiment experiment = parse_experiment(document.dump());
  EXPECT_EQ(experiment.model.layers[0].rope_theta, 500000.0);
  EXPECT_EQ(parse_experiment(experiment_to_json(experiment)).model.layers[0].rope_theta, 500000.0);
  Experiment plain = experiment;
  plain.model.layers[0].rope_theta = kDefaultRopeTheta;
  EXPECT_EQ(experiment_to_json(plain).find("rope_theta"), std::string::npos);
  const auto refused = [&](const Json& changed, const std::string& expected) {
    try {
      parse_experiment(changed.dump());
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const ExperimentError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  Json negative = document;
  negative["model"]["layers"][0]["rope_theta"] = -5;
  refused(negative, "rope_theta is the rotary embeddings' base and must be a positive number");
  Json learned = document;
  learned["model"]["layers"][0].erase("position");
  refused(learned, "rope_theta applies to rotary positions only");
}

}  // namespace
}  // namespace pipelab
