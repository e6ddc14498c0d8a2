#include "core/trace/json_writer.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace pipelab {
namespace {

TEST(JsonWriter, NestedContainersParseBack) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object();
  json.field("name", "x");
  json.field("count", 3);
  json.field("big", int64_t{1} << 40);
  json.field("ratio", 0.5);
  json.field("flag", true);
  json.key("list");
  json.begin_array(/*one_per_line=*/true);
  json.value(1);
  json.begin_object();
  json.end_object();
  json.begin_array();
  json.end_array();
  json.null();
  json.end_array();
  json.key("empty");
  json.begin_object();
  json.end_object();
  json.end_object();

  const auto parsed = nlohmann::json::parse(out.str());
  EXPECT_EQ(parsed.at("name"), "x");
  EXPECT_EQ(parsed.at("count"), 3);
  EXPECT_EQ(parsed.at("big").get<int64_t>(), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(parsed.at("ratio").get<double>(), 0.5);
  EXPECT_EQ(parsed.at("flag"), true);
  ASSERT_EQ(parsed.at("list").size(), 4u);
  EXPECT_TRUE(parsed.at("list")[3].is_null());
  EXPECT_TRUE(parsed.at("empty").empty());
}

TEST(JsonWriter, NonFiniteNumbersBecomeNull) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_array();
  json.value(std::numeric_limits<double>::quiet_NaN());
  json.value(std::numeric_limits<double>::infinity());
  json.value(-std::numeric_limits<double>::infinity());
  json.value(-0.25);
  json.end_array();
  EXPECT_EQ(out.str(), "[null,null,null,-0.25]");
}

TEST(JsonWriter, EscapesEveryCharacterJsonRequires) {
  std::string text = "q\" b\\ n\n r\r t\t";
  text += '\x01';
  text += '\x1f';
  text += " utf8 · ok";
  std::ostringstream out;
  write_json_string(out, text);
  EXPECT_EQ(nlohmann::json::parse(out.str()).get<std::string>(), text);
  EXPECT_NE(out.str().find("\\u0001"), std::string::npos);
  EXPECT_NE(out.str().find("\\u001f"), std::string::npos);
}

TEST(JsonWriter, DoublesRoundTripWithoutExponents) {
  for (double value : {0.1, 1.0 / 3.0, 1e-7, 123456789.125, 1e21}) {
    std::ostringstream out;
    JsonWriter(out).value(value);
    EXPECT_EQ(out.str().find_first_of("eE"), std::string::npos) << out.str();
    EXPECT_EQ(nlohmann::json::parse(out.str()).get<double>(), value) << out.str();
  }
}

}  // namespace
}  // namespace pipelab
