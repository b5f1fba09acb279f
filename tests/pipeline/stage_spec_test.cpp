#include <gtest/gtest.h>

#include "pipeline/stage_spec.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

TEST(StageSpec, ParsesChainsInBothSpellings) {
  auto specs = parse_pipeline("resize:scale=2:algo=bicubic, upscale:model=realesr-animevideov3,interpolate:fps=60");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].name, "resize");
  EXPECT_EQ(specs[0].options.values().at("algo"), "bicubic");
  EXPECT_EQ(specs[0].options.values().at("scale"), "2");
  EXPECT_EQ(specs[1].options.values().at("model"), "realesr-animevideov3");
  EXPECT_EQ(specs[2].options.values().at("fps"), "60");

  auto continued = parse_pipeline("resize:w=1280,h=720,filter:vf=eq");
  ASSERT_EQ(continued.size(), 2u);
  EXPECT_EQ(continued[0].options.values().at("w"), "1280");
  EXPECT_EQ(continued[0].options.values().at("h"), "720");
  EXPECT_TRUE(parse_pipeline("").empty());
}

TEST(StageSpec, BareNumbersContinueAListValue) {
  auto specs = parse_pipeline("model:file=m.pt:box=10,20,64,48:window=3,resize:w=64,h=48");
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].options.values().at("box"), "10,20,64,48");
  EXPECT_EQ(specs[0].options.values().at("window"), "3");
  EXPECT_EQ(specs[1].options.values().at("h"), "48");
  auto continued = parse_pipeline("model:file=m.pt,box=1,2,3,4");
  EXPECT_EQ(continued[0].options.values().at("box"), "1,2,3,4");
  EXPECT_THROW(parse_pipeline("resize,12"), Error);  // a number after a stage without options
  EXPECT_EQ(parse_pipeline("model:box='1,2,3,4':window=3")[0].options.values().at("box"), "1,2,3,4");  // quoted: the same
}

TEST(StageSpec, RejectsMalformedText) {
  EXPECT_THROW(parse_pipeline("scale=2"), Error);          // option before any stage
  EXPECT_THROW(parse_pipeline("resize:scale"), Error);     // option without a value
  EXPECT_THROW(parse_pipeline("resize:scale=2:scale=3"), Error);  // a key given twice
  // Values are text here; "scale=two" and "w=1.5" are refused by the stage's schema
  // (OptionSchema.BadValuesAreRefusedBeforeTheStageIsBuilt).
  EXPECT_EQ(parse_pipeline("resize:scale=two")[0].options.values().at("scale"), "two");
}

TEST(StageSpec, QuotedValuesKeepCommasAndColons) {
  // The two quoting forms, each holding the separators, next to ordinary stages.
  for (const std::string quoted : {"'crop=iw-8:ih-8,unsharp'", "[crop=iw-8:ih-8,unsharp]", "\"crop=iw-8:ih-8,unsharp\""}) {
    auto specs = parse_pipeline("resize:scale=2,filter:graph=" + quoted + ":context=1,upscale:model=x");
    ASSERT_EQ(specs.size(), 3u) << quoted;
    EXPECT_EQ(specs[1].name, "filter");
    EXPECT_EQ(specs[1].options.values().at("graph"), "crop=iw-8:ih-8,unsharp") << quoted;
    EXPECT_EQ(specs[1].options.values().at("context"), "1");
    EXPECT_EQ(specs[2].options.values().at("model"), "x");
  }
  // Brackets nest, so libavfilter's own [labels] and quotes survive; the text inside is kept as is.
  auto nested = parse_pipeline("filter:graph=[ split[a][b];[a][b]blend=all_mode=average ], resize:w=64");
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].options.values().at("graph"), " split[a][b];[a][b]blend=all_mode=average ");
  auto inner = parse_pipeline("filter:graph=[drawtext=text='a, b']");
  EXPECT_EQ(inner[0].options.values().at("graph"), "drawtext=text='a, b'");
  // Unquoted values are as before: '=' inside a value needs no quotes, and a continuation still works.
  auto plain = parse_pipeline("filter:graph=hqdn3d=4,resize:w=1280,h=720");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].options.values().at("graph"), "hqdn3d=4");
  EXPECT_EQ(plain[1].options.values().at("h"), "720");
  EXPECT_EQ(parse_pipeline("filter:graph='a,b' ,")[0].options.values().at("graph"), "a,b");
}

TEST(StageSpec, UnbalancedQuotesAreUsageErrors) {
  for (const char* bad : {"filter:graph='crop=iw-8", "filter:graph=[crop=[iw]", "filter:graph='a'b",
                          "filter:graph=crop=iw-8:ih-8,unsharp"}) {
    try {
      parse_pipeline(bad);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      std::printf("%s -> %s\n", bad, e.what());
    }
  }
}

}  // namespace
}  // namespace framelift::pipeline
