#include "core/data/sequence_tasks.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include "core/data/random.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

// Random streams per task (see random.h), apart from the other generators' 1xx
// and the shuffle's 2xx.
enum Stream : uint64_t {
  kCopyStream = 301,
  kReverseStream,
  kSortStream,
  kAddStream,
};

// Past this a task's symbols are so many that a short prefix almost never
// repeats one; the cap keeps token_text small.
constexpr int kMaxTaskVocab = 65536;
constexpr int kSpecialTokens = kFirstSymbolToken;
constexpr int kMinSymbols = 2;  // one symbol would make every answer the same

// What a task needs, for its checks and messages.
struct TaskNeeds {
  int64_t min_sequence_length;
  std::string sequence_reason;  // why, after "needs at least N "
  int min_vocab;
  std::string vocab_reason;
};

void check_task(const std::string& source, const SequenceTaskOptions& options,
                const TaskNeeds& needs) {
  if (options.samples < 1) {
    throw DataError(source + ": data.samples is " + std::to_string(options.samples) +
                    "; a sequence task needs at least 1 sample");
  }
  if (options.vocab < needs.min_vocab) {
    throw DataError(source + ": data.vocab is " + std::to_string(options.vocab) + "; " + source +
                    " needs at least " + std::to_string(needs.min_vocab) + " " +
                    needs.vocab_reason + "; raise data.vocab");
  }
  if (options.vocab > kMaxTaskVocab) {
    throw DataError(source + ": data.vocab is " + std::to_string(options.vocab) +
                    "; a sequence task uses at most " + std::to_string(kMaxTaskVocab) +
                    " tokens; lower data.vocab");
  }
  if (options.sequence_length < needs.min_sequence_length) {
    throw DataError(source + ": data.sequence_length is " +
                    std::to_string(options.sequence_length) + "; " + source + " needs at least " +
                    std::to_string(needs.min_sequence_length) + " " + needs.sequence_reason +
                    "; raise data.sequence_length");
  }
  if (options.samples > kMaxSequenceTokens / options.sequence_length) {
    throw DataError(source + ": " + std::to_string(options.samples) + " samples x " +
                    std::to_string(options.sequence_length) + " tokens is too large (at most " +
                    std::to_string(kMaxSequenceTokens) +
                    " tokens); lower data.samples or data.sequence_length");
  }
}

const TaskNeeds kSymbolTaskNeeds{
    2,
    "(a 1-symbol question, the separator and a 1-symbol answer make 3 tokens, and the "
    "inputs are all but the last)",
    kSpecialTokens + kMinSymbols, "(4 special tokens and 2 symbols)"};

const TaskNeeds kAddTaskNeeds{
    5,
    "(1-digit numbers: a + b = and a 2-digit sum make 6 tokens, and the inputs are all "
    "but the last)",
    kSpecialTokens + kDecimalDigits, "(4 special tokens and the digits 0-9)"};

Dataset empty_sequence_set(const std::string& name, const SequenceTaskOptions& options) {
  Dataset dataset;
  dataset.name = name;
  dataset.samples = options.samples;
  dataset.features = options.sequence_length;
  dataset.vocab = options.vocab;
  dataset.token_text = sequence_task_token_text(options.vocab);
  const auto tokens = static_cast<size_t>(options.samples * options.sequence_length);
  dataset.x.reserve(tokens);
  dataset.token_labels.reserve(tokens);
  dataset.loss_mask.reserve(tokens);
  return dataset;
}

// Appends the sample cut from `tokens` (sequence_length + 1 ids; shorter is
// padded): input i is tokens[i], its label tokens[i + 1], counted when that
// label sits in [answer_begin, answer_end).
void append_sample(Dataset& dataset, std::vector<int32_t>& tokens, int64_t answer_begin,
                   int64_t answer_end) {
  const int64_t length = dataset.features;
  assert(static_cast<int64_t>(tokens.size()) <= length + 1);
  tokens.resize(static_cast<size_t>(length + 1), kPadToken);
  for (int64_t i = 0; i < length; ++i) {
    dataset.x.push_back(static_cast<float>(tokens[static_cast<size_t>(i)]));
    dataset.token_labels.push_back(tokens[static_cast<size_t>(i + 1)]);
    dataset.loss_mask.push_back(i + 1 >= answer_begin && i + 1 < answer_end ? 1 : 0);
  }
}

// copy, reverse and sort differ only in how the answer follows from the question.
using AnswerRule = std::function<void(std::vector<int32_t>& answer)>;

Dataset make_symbol_task(const std::string& name, uint64_t stream,
                         const SequenceTaskOptions& options, const AnswerRule& rule) {
  check_task(name, options, kSymbolTaskNeeds);
  const int64_t prefix = sequence_task_prefix_length(options.sequence_length);
  const auto symbols = static_cast<uint64_t>(options.vocab - kFirstSymbolToken);
  Rng rng(options.seed, stream);
  Dataset dataset = empty_sequence_set(name, options);
  std::vector<int32_t> tokens;
  std::vector<int32_t> answer;
  for (int64_t sample = 0; sample < options.samples; ++sample) {
    answer.clear();
    for (int64_t i = 0; i < prefix; ++i) {
      answer.push_back(kFirstSymbolToken + static_cast<int32_t>(rng.below(symbols)));
    }
    tokens = answer;
    tokens.push_back(kSeparatorToken);
    rule(answer);
    tokens.insert(tokens.end(), answer.begin(), answer.end());
    append_sample(dataset, tokens, prefix + 1, 2 * prefix + 1);
  }
  return dataset;
}

}  // namespace

int64_t sequence_task_prefix_length(int64_t sequence_length) { return sequence_length / 2; }

int64_t add_task_digits(int64_t sequence_length) { return (sequence_length - 2) / 3; }

Dataset make_copy_task(const SequenceTaskOptions& options) {
  return make_symbol_task("copy", kCopyStream, options, [](std::vector<int32_t>&) {});
}

Dataset make_reverse_task(const SequenceTaskOptions& options) {
  return make_symbol_task("reverse", kReverseStream, options, [](std::vector<int32_t>& answer) {
    std::reverse(answer.begin(), answer.end());
  });
}

Dataset make_sort_task(const SequenceTaskOptions& options) {
  return make_symbol_task("sort", kSortStream, options, [](std::vector<int32_t>& answer) {
    std::sort(answer.begin(), answer.end());
  });
}

Dataset make_add_task(const SequenceTaskOptions& options) {
  check_task("add", options, kAddTaskNeeds);
  const int64_t digits = add_task_digits(options.sequence_length);
  Rng rng(options.seed, kAddStream);
  Dataset dataset = empty_sequence_set("add", options);
  std::vector<int32_t> a(static_cast<size_t>(digits));
  std::vector<int32_t> b(static_cast<size_t>(digits));
  std::vector<int32_t> tokens;
  const auto digit_token = [](int32_t digit) { return kFirstSymbolToken + digit; };
  for (int64_t sample = 0; sample < options.samples; ++sample) {
    // Uniform digits make each operand uniform in [0, 10^D).
    for (int32_t& digit : a) digit = static_cast<int32_t>(rng.below(kDecimalDigits));
    for (int32_t& digit : b) digit = static_cast<int32_t>(rng.below(kDecimalDigits));
    tokens.clear();
    for (int32_t digit : a) tokens.push_back(digit_token(digit));
    tokens.push_back(kPlusToken);
    for (int32_t digit : b) tokens.push_back(digit_token(digit));
    tokens.push_back(kEqualsToken);
    const auto answer_begin = static_cast<int64_t>(tokens.size());
    // Digit by digit, least significant first: no width limit, no overflow.
    int32_t carry = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const int32_t sum = a[i] + b[i] + carry;
      tokens.push_back(digit_token(sum % kDecimalDigits));
      carry = sum / kDecimalDigits;
    }
    tokens.push_back(digit_token(carry));
    append_sample(dataset, tokens, answer_begin, static_cast<int64_t>(tokens.size()));
  }
  return dataset;
}

std::vector<std::string> sequence_task_token_text(int vocab) {
  std::vector<std::string> text = {"_", "|", "+", "="};
  for (int symbol = 0; symbol + kFirstSymbolToken < vocab; ++symbol) {
    if (symbol < 10) {
      text.push_back(std::string(1, static_cast<char>('0' + symbol)));
    } else if (symbol < 36) {
      text.push_back(std::string(1, static_cast<char>('a' + symbol - 10)));
    } else {
      text.push_back(std::string(1, '#').append(std::to_string(symbol)));
    }
  }
  text.resize(static_cast<size_t>(std::max(vocab, 0)));
  return text;
}

std::vector<std::string> sequence_task_names() { return {"copy", "reverse", "sort", "add"}; }

bool is_sequence_task(const std::string& source) {
  const auto names = sequence_task_names();
  return std::find(names.begin(), names.end(), source) != names.end();
}

Dataset make_sequence_task(const std::string& source, const SequenceTaskOptions& options) {
  if (source == "copy") return make_copy_task(options);
  if (source == "reverse") return make_reverse_task(options);
  if (source == "sort") return make_sort_task(options);
  if (source == "add") return make_add_task(options);
  std::string valid;
  for (const auto& name : sequence_task_names()) valid += (valid.empty() ? "" : ", ") + name;
  throw DataError("unknown sequence task " + quoted_excerpt(source) + ": valid ones are " + valid);
}

}  // namespace pipelab
