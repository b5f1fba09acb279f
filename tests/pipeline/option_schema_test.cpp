// Stage options are declared once (pipeline/option_schema.h): every value is checked against the
// declaration before a stage is built, so a bad value is one line naming the stage, the option and
// what is allowed, with exit code 2 (ErrorKind::Usage), and never starts work.
#include <gtest/gtest.h>

#include <string>

#include "pipeline/option_schema.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

std::string usage_error(const std::string& pipeline) {
  try {
    make_stages(pipeline);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << pipeline;
    return e.what();
  }
  return "";
}

TEST(OptionSchema, BadValuesAreRefusedBeforeTheStageIsBuilt) {
  struct Case {
    std::string pipeline, mentions;
  };
  // Each was accepted before the schema, or failed only once work had started.
  for (const Case& c : {Case{"resize:scale=nan", "scale=nan"}, Case{"resize:scale=inf", "scale=inf"},
                        Case{"resize:scale=1e999", "scale=1e999"}, Case{"resize:scale=0", "scale=0"},
                        Case{"resize:scale=-2", "scale=-2"}, Case{"resize:w=1.5", "w=1.5"},
                        Case{"resize:algo=fancy", "lanczos, bicubic"}, Case{"interpolate:factor=0", "factor=0"},
                        Case{"interpolate:factor=1000000", "factor=1000000"}, Case{"interpolate:fps=0", "fps=0"},
                        Case{"interpolate:fps=60/0", "fps=60/0"}, Case{"interpolate:ensemble=yes", "0 or 1"},
                        Case{"upscale:scale=0", "scale=0"}, Case{"upscale:batch=0", "batch=0"},
                        Case{"upscale:threads=100000", "threads=100000"}, Case{"upscale:max_memory=lots", "max_memory"},
                        Case{"upscale:precision=fp8", "fp32"}, Case{"denoise:level=7", "level=7"},
                        Case{"deinterlace:mode=weave", "frame, field"}, Case{"filter:graph=null:context=-1", "context=-1"},
                        Case{"model:file=m.pt:window=0", "window=0"}}) {
    const std::string message = usage_error(c.pipeline);
    EXPECT_NE(message.find(c.mentions), std::string::npos) << c.pipeline << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

TEST(OptionSchema, UnknownOptionsNameTheDeclaredOnes) {
  const std::string message = usage_error("resize:scael=2");
  EXPECT_NE(message.find("unknown option 'scael'"), std::string::npos) << message;
  EXPECT_NE(message.find("scale, w, h, algo"), std::string::npos) << message;
}

TEST(OptionSchema, CommandLineDefaultsAreCheckedWhereTheStageDeclaresThem) {
  try {
    make_stages("upscale", {{"tile", "-5"}});
    FAIL() << "--tile -5 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile=-5 (from the command line)"), std::string::npos) << e.what();
  }
  // resize declares no tile: the CLI's inference defaults do not concern it.
  EXPECT_NO_THROW(make_stages("resize:scale=2", {{"tile", "-5"}, {"device", "cpu"}}));
}

TEST(OptionSchema, ValuesInsideTheDeclarationPass) {
  EXPECT_NO_THROW(make_stages("resize:scale=0.5:algo=bicubic,resize:w=640,h=360"));
  EXPECT_NO_THROW(make_stages("filter:graph='crop=iw-8:ih-8,unsharp':context=2"));
  EXPECT_NO_THROW(make_stages("deinterlace:mode=field:parity=tff:filter=yadif"));
}

TEST(OptionSchema, DescriptionComesFromTheDeclaration) {
  const OptionSchema schema{number_option("scale", "", 0, 16, "or w=", true), integer_option("n", "3", 1, 9, ""),
                            choice_option("algo", "lanczos", {"lanczos", "area"}, ""), flag_option("x", "0", "")};
  EXPECT_EQ(describe_options(schema),
            "scale=F (0 < F <= 16; or w=), n=N (1 <= N <= 9; default 3), algo=lanczos|area (default lanczos), "
            "x=0|1 (default 0)");
  // Every registered stage describes each option it declares.
  for (const StageInfo& info : registered_stages())
    for (const OptionSpec& o : info.options)
      EXPECT_NE(describe_options(info.options).find(o.name + "="), std::string::npos) << info.name << " " << o.name;
}

}  // namespace
}  // namespace framelift::pipeline
