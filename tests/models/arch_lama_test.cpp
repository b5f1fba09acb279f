// LaMa against the upstream implementation (spandrel's LaMa, its FFCResNetGenerator at ngf 8 with
// two FFC blocks, run on Debian's python3-torch by tests/data/arch/make_references.py, seeded
// weights and BatchNorm statistics, a last layer scaled so that the fill spans 0-1): the committed
// checkpoint is detected from its keys and shapes and, on a real 64x48 crop with a rectangle and
// a disc to fill, gives upstream's fill within 50 dB in fp32 and keeps every other pixel exactly;
// bf16 stays within its measured sensitivity. The training checkpoint's layout (generator.model.N
// beside a discriminator, and a Lightning .ckpt file holding it) gives the same network; big-lama's published shapes are detected;
// broken layouts are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>
#include <iostream>

#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "support/test_paths.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

const char* kReference = "lama-ngf8";

fs::path reference_pth() { return ft::arch_reference_dir() / (std::string(kReference) + ".pth"); }

StateDict reference_io() { return framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(kReference) + ".ref.safetensors")); }

// Zeros in upstream's layout ("model.model.N"): first width ngf, `downs` stride-2 layers each
// doubling it, the last split into local and global, `blocks` FFC blocks.
StateDict lama_shapes(int64_t ngf, int downs, int blocks, int64_t local, int64_t global) {
  StateDict d;
  const auto bn = [&](const std::string& p, int64_t c) {
    d[p + ".weight"] = at::ones({c});
    d[p + ".bias"] = at::zeros({c});
    d[p + ".running_mean"] = at::zeros({c});
    d[p + ".running_var"] = at::ones({c});
    d[p + ".num_batches_tracked"] = at::zeros({}, at::kLong);
  };
  const auto conv = [&](const std::string& p, int64_t in, int64_t out, int64_t k) { d[p + ".weight"] = at::zeros({out, in, k, k}); };
  const auto m = [](int i) { return "model.model." + std::to_string(i); };
  conv(m(1) + ".ffc.convl2l", 4, ngf, 7);
  bn(m(1) + ".bn_l", ngf);
  int64_t c = ngf;
  for (int i = 0; i < downs; ++i) {
    const std::string p = m(2 + i);
    if (i < downs - 1) {
      conv(p + ".ffc.convl2l", c, 2 * c, 3);
      bn(p + ".bn_l", 2 * c);
      c *= 2;
    } else {
      conv(p + ".ffc.convl2l", c, local, 3);
      conv(p + ".ffc.convl2g", c, global, 3);
      bn(p + ".bn_l", local);
      bn(p + ".bn_g", global);
    }
  }
  for (int b = 0; b < blocks; ++b)
    for (const char* half : {".conv1", ".conv2"}) {
      const std::string p = m(2 + downs + b) + half;
      conv(p + ".ffc.convl2l", local, local, 3);
      conv(p + ".ffc.convl2g", local, global, 3);
      conv(p + ".ffc.convg2l", global, local, 3);
      conv(p + ".ffc.convg2g.conv1.0", global, global / 2, 1);
      bn(p + ".ffc.convg2g.conv1.1", global / 2);
      conv(p + ".ffc.convg2g.fu.conv_layer", global, global, 1);
      bn(p + ".ffc.convg2g.fu.bn", global);
      conv(p + ".ffc.convg2g.conv2", global / 2, global, 1);
      bn(p + ".bn_l", local);
      bn(p + ".bn_g", global);
    }
  c = local + global;
  int index = 3 + downs + blocks;
  for (int i = 0; i < downs; ++i, index += 3) {
    const int64_t out = i == downs - 1 ? ngf : c / 2;
    d[m(index) + ".weight"] = at::zeros({c, out, 3, 3});
    d[m(index) + ".bias"] = at::zeros({out});
    bn(m(index + 1), out);
    c = out;
  }
  conv(m(index + 1), ngf, 3, 7);
  d[m(index + 1) + ".bias"] = at::zeros({3});
  return d;
}

}  // namespace

TEST(ArchLama, MatchesTheUpstreamImplementationAndKeepsEveryPixelOutsideTheMask) {
  framelift::infer::configure_cpu_threads(0);
  const StateDict io = reference_io();
  const auto d = fm::detect(framelift::weights::load_weights(reference_pth()), reference_pth().string());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->arch, "lama");
  EXPECT_EQ(d->in_channels, 4);
  EXPECT_EQ(d->out_channels, 3);
  EXPECT_EQ(d->params.get("ngf", 0), 8.0);
  EXPECT_EQ(d->params.get("downs", 0), 3.0);
  EXPECT_EQ(d->params.get("blocks", 0), 2.0);
  EXPECT_EQ(d->params.get("local", 0), 16.0);
  EXPECT_EQ(d->params.get("global", 0), 48.0);

  auto model = fm::load_model(reference_pth());
  EXPECT_FALSE(model->info().tiled) << "the FFT spans the whole frame";
  EXPECT_EQ(model->info().size_multiple, 8);
  const ft::FillAgreement r = ft::fill_agreement(*model, io, kReference);
  EXPECT_TRUE(r.outside_exact) << "outside the mask, the input exactly";
  EXPECT_GE(r.fp32_db, 50.0);
  EXPECT_LT(r.hole_db, 20.0);
  EXPECT_GE(r.bf16_db, 45.0);  // measured 54.5 dB (Zen 5): the Fourier units run in fp32 under bf16
}

TEST(ArchLama, TheTrainingCheckpointsLayoutIsTheSameNetwork) {
  // advimman/lama's best.ckpt: the generator as "generator.model.N", beside a discriminator.
  const StateDict plain = framelift::weights::load_weights(reference_pth());
  StateDict training;
  for (const auto& [key, t] : plain) training["generator." + key.substr(std::string("model.").size())] = t;
  training["discriminator.model0.0.weight"] = at::zeros({8, 3, 4, 4});
  const auto d = fm::detect(training, "best.ckpt");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->arch, "lama");
  EXPECT_EQ(d->variant, "training checkpoint");
  const at::Tensor input = reference_io().at("input");
  EXPECT_TRUE(at::equal(fm::build_model(training, "best.ckpt")->forward(input), fm::build_model(plain, "lama.pth")->forward(input)));
}

// And as a file: Lightning's checkpoint (written here by PyTorch's own torch.save, Debian's
// python3-torch) wraps the generator, a discriminator and the training state in "state_dict"
// beside "epoch" and the optimizer's; framelift reads the generator out of it.
TEST(ArchLama, ALightningCheckpointFileLoads) {
  const fs::path file = fs::temp_directory_path() / "framelift-lama-best.ckpt";
  const std::string script =
      "import sys, torch\n"
      "sd = torch.load(sys.argv[1])\n"
      "g = {'generator.' + k[len('model.'):]: v for k, v in sd.items()}\n"
      "g['discriminator.model0.0.weight'] = torch.zeros(8, 3, 4, 4)\n"
      "torch.save({'epoch': 3, 'global_step': 1000, 'pytorch-lightning_version': '1.2.9', 'state_dict': g,\n"
      "            'optimizer_states': [{'state': {}, 'param_groups': [{'lr': 0.001}]}]}, sys.argv[2])\n";
  const fs::path py = fs::temp_directory_path() / "framelift-lama-ckpt.py";
  std::ofstream(py) << script;
  ASSERT_EQ(ft::run_command("/usr/bin/python3 " + py.string() + " " + reference_pth().string() + " " + file.string()), 0)
      << "python3-torch (scripts/setup.sh --tests installs it)";
  auto model = fm::load_model(file);
  EXPECT_EQ(model->info().arch, "lama");
  const at::Tensor input = reference_io().at("input");
  EXPECT_TRUE(at::equal(model->forward(input), fm::load_model(reference_pth())->forward(input)));
  fs::remove(file);
  fs::remove(py);
}

TEST(ArchLama, BigLamasPublishedShapesAreDetected) {
  const auto d = fm::detect(lama_shapes(64, 3, 18, 128, 384), "big-lama.pth");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->params.get("ngf", 0), 64.0);
  EXPECT_EQ(d->params.get("blocks", 0), 18.0);
  EXPECT_EQ(d->params.get("w1", 0), 128.0);
  EXPECT_EQ(d->params.get("w2", 0), 256.0);
  EXPECT_EQ(d->params.get("global", 0), 384.0);
  EXPECT_NO_THROW(fm::build_model(lama_shapes(8, 3, 2, 16, 48), "small.pth"));
}

TEST(ArchLama, BrokenLayoutsAreRefusedByName) {
  StateDict d = lama_shapes(8, 3, 2, 16, 48);
  d["model.model.6.conv2.ffc.convg2l.weight"] = at::zeros({16, 47, 3, 3});
  ft::expect_refused(d, "model.model.6.conv2.ffc.convg2l.weight");
  d = lama_shapes(8, 3, 2, 16, 48);
  d.erase("model.model.5.conv1.ffc.convg2g.fu.bn.running_var");
  ft::expect_refused(d, "model.model.5.conv1.ffc.convg2g.fu.bn.running_var");
  d = lama_shapes(8, 3, 2, 16, 48);
  d["model.model.5.conv1.ffc.convg2g.lfu.conv_layer.weight"] = at::zeros({24, 24, 1, 1});  // an LFU, which big-lama has not
  ft::expect_refused(d, "lfu.conv_layer.weight");
  d = lama_shapes(8, 3, 2, 16, 48);
  d.erase("model.model.18.weight");
  ft::expect_refused(d, "no final convolution at model.model.18");
}
