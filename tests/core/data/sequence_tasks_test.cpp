#include "core/data/sequence_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/data/token_text.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using testing::is_safe_message;

SequenceTaskOptions task_options(int64_t samples, int64_t length, int vocab, uint64_t seed = 1) {
  SequenceTaskOptions options;
  options.samples = samples;
  options.sequence_length = length;
  options.vocab = vocab;
  options.seed = seed;
  return options;
}

// The sequence_length + 1 tokens sample `i` was cut from: its inputs, then its last label.
std::vector<int32_t> full_tokens(const Dataset& dataset, int64_t i) {
  std::vector<int32_t> tokens;
  for (int64_t p = 0; p < dataset.features; ++p) {
    tokens.push_back(static_cast<int32_t>(dataset.row(i)[p]));
  }
  tokens.push_back(dataset.token_labels[static_cast<size_t>((i + 1) * dataset.features - 1)]);
  return tokens;
}

// Input positions whose loss_mask is 1 in sample `i`.
std::vector<int64_t> counted_positions(const Dataset& dataset, int64_t i) {
  std::vector<int64_t> positions;
  for (int64_t p = 0; p < dataset.features; ++p) {
    if (dataset.loss_mask[static_cast<size_t>(i * dataset.features + p)] == 1)
      positions.push_back(p);
  }
  return positions;
}

std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> values;
  for (int64_t v = begin; v < end; ++v) values.push_back(v);
  return values;
}

std::string error_of(const std::string& task, const SequenceTaskOptions& options) {
  try {
    make_sequence_task(task, options);
  } catch (const DataError& error) {
    EXPECT_TRUE(is_safe_message(error.what()));
    return error.what();
  }
  return "no error";
}

class EverySequenceTask : public ::testing::TestWithParam<std::string> {};

TEST_P(EverySequenceTask, HasTheShapeOfASequenceSet) {
  const Dataset dataset = make_sequence_task(GetParam(), task_options(300, 17, 16));
  EXPECT_EQ(dataset.name, GetParam());
  EXPECT_TRUE(dataset.is_sequence());
  EXPECT_FALSE(dataset.is_classification());
  EXPECT_EQ(dataset.samples, 300);
  EXPECT_EQ(dataset.features, 17);
  EXPECT_EQ(dataset.sequence_length(), 17);
  EXPECT_EQ(dataset.vocab, 16);
  EXPECT_EQ(dataset.token_labels.size(), 300u * 17);
  EXPECT_EQ(dataset.loss_mask.size(), 300u * 17);
  EXPECT_EQ(dataset.token_text, sequence_task_token_text(16));
  EXPECT_TRUE(has_consistent_shape(dataset));
}

TEST_P(EverySequenceTask, LabelsAreTheNextInputs) {
  const Dataset dataset = make_sequence_task(GetParam(), task_options(50, 20, 16));
  for (int64_t i = 0; i < dataset.samples; ++i) {
    for (int64_t p = 0; p + 1 < dataset.features; ++p) {
      ASSERT_EQ(dataset.token_labels[static_cast<size_t>(i * 20 + p)],
                static_cast<int32_t>(dataset.row(i)[p + 1]));
    }
  }
}

TEST_P(EverySequenceTask, IsDeterministicPerSeed) {
  const Dataset a = make_sequence_task(GetParam(), task_options(200, 14, 16, 5));
  const Dataset b = make_sequence_task(GetParam(), task_options(200, 14, 16, 5));
  const Dataset other = make_sequence_task(GetParam(), task_options(200, 14, 16, 6));
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.token_labels, b.token_labels);
  EXPECT_EQ(a.loss_mask, b.loss_mask);
  EXPECT_NE(a.x, other.x);
  EXPECT_EQ(a.loss_mask, other.loss_mask);  // the layout is fixed; only the tokens change
}

TEST_P(EverySequenceTask, MoreSamplesKeepTheFirstOnes) {
  const Dataset few = make_sequence_task(GetParam(), task_options(20, 14, 16, 3));
  const Dataset many = make_sequence_task(GetParam(), task_options(90, 14, 16, 3));
  EXPECT_TRUE(std::equal(few.x.begin(), few.x.end(), many.x.begin()));
}

TEST_P(EverySequenceTask, EveryCountedLabelIsAnAnswerToken) {
  const Dataset dataset = make_sequence_task(GetParam(), task_options(100, 23, 16));
  const auto counts = count_per_class(dataset);
  ASSERT_EQ(counts.size(), 16u);
  for (int32_t special : {kPadToken, kSeparatorToken, kPlusToken, kEqualsToken}) {
    EXPECT_EQ(counts[static_cast<size_t>(special)], 0) << special;
  }
}

INSTANTIATE_TEST_SUITE_P(Tasks, EverySequenceTask,
                         ::testing::Values("copy", "reverse", "sort", "add"));

// copy, reverse, sort: s1..sL | answer _..; the mask counts the L labels that are answer tokens.
void check_symbol_task(const std::string& task, int64_t length,
                       void (*rule)(std::vector<int32_t>&)) {
  const Dataset dataset = make_sequence_task(task, task_options(200, length, 12));
  const int64_t prefix = length / 2;
  ASSERT_EQ(sequence_task_prefix_length(length), prefix);
  for (int64_t i = 0; i < dataset.samples; ++i) {
    const std::vector<int32_t> tokens = full_tokens(dataset, i);
    std::vector<int32_t> question(tokens.begin(), tokens.begin() + prefix);
    for (int32_t token : question) {
      ASSERT_GE(token, kFirstSymbolToken);
      ASSERT_LT(token, 12);
    }
    ASSERT_EQ(tokens[static_cast<size_t>(prefix)], kSeparatorToken);
    rule(question);
    const std::vector<int32_t> answer(tokens.begin() + prefix + 1, tokens.begin() + 2 * prefix + 1);
    ASSERT_EQ(answer, question) << task << " sample " << i << ": "
                                << decode_tokens(dataset, tokens);
    for (size_t p = 2 * prefix + 1; p < tokens.size(); ++p) ASSERT_EQ(tokens[p], kPadToken);
    // Input position p predicts token p + 1: the answer tokens L+1..2L.
    ASSERT_EQ(counted_positions(dataset, i), range(prefix, 2 * prefix));
  }
}

TEST(SequenceTasks, CopyRepeatsTheQuestion) {
  check_symbol_task("copy", 16, [](std::vector<int32_t>&) {});
  check_symbol_task("copy", 7, [](std::vector<int32_t>&) {});  // odd: one pad token at the end
}

TEST(SequenceTasks, ReverseReversesIt) {
  check_symbol_task("reverse", 16,
                    [](std::vector<int32_t>& q) { std::reverse(q.begin(), q.end()); });
  check_symbol_task("reverse", 9,
                    [](std::vector<int32_t>& q) { std::reverse(q.begin(), q.end()); });
}

TEST(SequenceTasks, SortSortsIt) {
  check_symbol_task("sort", 16, [](std::vector<int32_t>& q) { std::sort(q.begin(), q.end()); });
  check_symbol_task("sort", 2, [](std::vector<int32_t>& q) { std::sort(q.begin(), q.end()); });
}

TEST(SequenceTasks, SymbolsCoverTheVocabulary) {
  const Dataset dataset = make_copy_task(task_options(500, 20, 30));
  std::vector<int> seen(30, 0);
  for (float token : dataset.x) ++seen[static_cast<size_t>(token)];
  for (int id = kFirstSymbolToken; id < 30; ++id) EXPECT_GT(seen[static_cast<size_t>(id)], 0) << id;
}

// The digits of an add operand or sum, least significant first, as a number.
unsigned __int128 number_of(const std::vector<int32_t>& tokens, size_t begin, size_t digits) {
  unsigned __int128 value = 0;
  for (size_t d = digits; d-- > 0;) {
    const int32_t digit = tokens[begin + d] - kFirstSymbolToken;
    EXPECT_GE(digit, 0);
    EXPECT_LT(digit, 10);
    value = value * 10 + static_cast<unsigned>(digit);
  }
  return value;
}

void check_add_task(int64_t length, int vocab) {
  const Dataset dataset = make_add_task(task_options(300, length, vocab));
  const auto digits = static_cast<size_t>((length - 2) / 3);
  ASSERT_EQ(add_task_digits(length), static_cast<int64_t>(digits));
  int carries = 0;
  for (int64_t i = 0; i < dataset.samples; ++i) {
    const std::vector<int32_t> tokens = full_tokens(dataset, i);
    ASSERT_EQ(tokens[digits], kPlusToken);
    ASSERT_EQ(tokens[2 * digits + 1], kEqualsToken);
    const auto a = number_of(tokens, 0, digits);
    const auto b = number_of(tokens, digits + 1, digits);
    const auto sum = number_of(tokens, 2 * digits + 2, digits + 1);
    ASSERT_TRUE(a + b == sum) << "sample " << i << ": " << decode_tokens(dataset, tokens);
    for (size_t p = 3 * digits + 3; p < tokens.size(); ++p) ASSERT_EQ(tokens[p], kPadToken);
    // Inputs 2D+1 ('=') .. 3D+1 predict the D + 1 sum digits.
    ASSERT_EQ(counted_positions(dataset, i),
              range(2 * static_cast<int64_t>(digits) + 1, 3 * static_cast<int64_t>(digits) + 2));
    if (tokens[3 * digits + 2] != kFirstSymbolToken) ++carries;
  }
  EXPECT_GT(carries, 0);  // some sums carry into the extra digit
}

TEST(SequenceTasks, AddWritesCorrectSums) {
  check_add_task(5, 14);   // 1-digit numbers, the shortest
  check_add_task(11, 14);  // 3 digits
  check_add_task(13, 14);  // 3 digits and 2 pad tokens
  check_add_task(62, 20);  // 20 digits: past 64-bit integers
}

TEST(SequenceTasks, AddUsesOnlyDigitsWhateverTheVocabulary) {
  const Dataset dataset = make_add_task(task_options(200, 11, 40));
  for (float token : dataset.x) ASSERT_LT(token, kFirstSymbolToken + kDecimalDigits);
  EXPECT_EQ(dataset.vocab, 40);
}

TEST(SequenceTasks, ASampleReadsAsText) {
  const Dataset add = make_add_task(task_options(1, 8, 14, 9));
  const std::string text = decode_tokens(add, full_tokens(add, 0));
  ASSERT_EQ(text.size(), 9u);  // 2 + 2 = 3 digits, nothing padded
  EXPECT_EQ(text[2], '+');
  EXPECT_EQ(text[5], '=');
  const auto reversed_number = [&](size_t begin, size_t count) {
    std::string digits = text.substr(begin, count);
    std::reverse(digits.begin(), digits.end());
    return std::stoi(digits);
  };
  EXPECT_EQ(reversed_number(0, 2) + reversed_number(3, 2), reversed_number(6, 3)) << text;

  const Dataset copy = make_copy_task(task_options(1, 6, 8, 9));
  const std::string copied = decode_tokens(copy, full_tokens(copy, 0));
  EXPECT_EQ(copied.size(), 7u);
  EXPECT_EQ(copied.substr(0, 3), copied.substr(4, 3)) << copied;
  EXPECT_EQ(copied[3], '|');
}

TEST(SequenceTasks, TheSameSeedGivesTheSameTokensEverywhere) {
  // Pinned tokens: a change here means every saved experiment gets new data.
  const Dataset copy = make_copy_task(task_options(2, 8, 10, 1));
  const Dataset add = make_add_task(task_options(1, 8, 14, 1));
  EXPECT_EQ(decode_tokens(copy, full_tokens(copy, 0)) + " " +
                decode_tokens(copy, full_tokens(copy, 1)) + " " +
                decode_tokens(add, full_tokens(add, 0)),
            "5434|5434 2001|2001 39+27=561");  // 93 + 72 = 165, digits reversed
}

TEST(SequenceTasks, TokenTextNamesTheLayout) {
  const auto text = sequence_task_token_text(45);
  ASSERT_EQ(text.size(), 45u);
  EXPECT_EQ(text[kPadToken], "_");
  EXPECT_EQ(text[kSeparatorToken], "|");
  EXPECT_EQ(text[kPlusToken], "+");
  EXPECT_EQ(text[kEqualsToken], "=");
  EXPECT_EQ(text[kFirstSymbolToken], "0");
  EXPECT_EQ(text[kFirstSymbolToken + 9], "9");
  EXPECT_EQ(text[kFirstSymbolToken + 10], "a");
  EXPECT_EQ(text[kFirstSymbolToken + 35], "z");
  EXPECT_EQ(text[kFirstSymbolToken + 36], "#36");
  EXPECT_EQ(sequence_task_token_text(6).size(), 6u);
}

TEST(SequenceTasks, Names) {
  EXPECT_EQ(sequence_task_names(), (std::vector<std::string>{"copy", "reverse", "sort", "add"}));
  for (const auto& name : sequence_task_names()) EXPECT_TRUE(is_sequence_task(name));
  EXPECT_FALSE(is_sequence_task("spiral"));
  EXPECT_FALSE(is_sequence_task("text"));
}

TEST(SequenceTasks, ErrorsSayWhatIsWrongAndHowToFixIt) {
  const auto contains = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string message = error_of("copy", task_options(0, 8, 10));
  EXPECT_TRUE(contains(message, "copy: data.samples is 0; a sequence task needs at least 1 sample"))
      << message;

  message = error_of("reverse", task_options(10, 8, 5));
  EXPECT_TRUE(contains(message,
                       "reverse: data.vocab is 5; reverse needs at least 6 (4 special tokens "
                       "and 2 symbols); raise data.vocab"))
      << message;

  message = error_of("add", task_options(10, 8, 13));
  EXPECT_TRUE(contains(message,
                       "add: data.vocab is 13; add needs at least 14 (4 special tokens and "
                       "the digits 0-9); raise data.vocab"))
      << message;

  message = error_of("sort", task_options(10, 8, 70000));
  EXPECT_TRUE(contains(message, "sort: data.vocab is 70000; a sequence task uses at most 65536"))
      << message;
  EXPECT_TRUE(contains(message, "lower data.vocab")) << message;

  message = error_of("copy", task_options(10, 1, 10));
  EXPECT_TRUE(contains(message, "copy: data.sequence_length is 1; copy needs at least 2 ("))
      << message;
  EXPECT_TRUE(contains(message, "raise data.sequence_length")) << message;

  message = error_of("add", task_options(10, 4, 14));
  EXPECT_TRUE(contains(message, "add: data.sequence_length is 4; add needs at least 5 (1-digit"))
      << message;

  message = error_of("copy", task_options(10, -3, 10));
  EXPECT_TRUE(contains(message, "data.sequence_length is -3")) << message;

  message = error_of("copy", task_options(int64_t{1} << 20, 1024, 10));
  EXPECT_TRUE(contains(message,
                       "copy: 1048576 samples x 1024 tokens is too large (at most 268435456 "
                       "tokens); lower data.samples or data.sequence_length"))
      << message;

  message = error_of("palindrome\n", task_options(10, 8, 10));
  EXPECT_TRUE(contains(message,
                       "unknown sequence task 'palindrome\\n': valid ones are copy, reverse, "
                       "sort, add"))
      << message;
}

}  // namespace
}  // namespace pipelab
