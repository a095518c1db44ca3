// `vdnn make-images --out DIR --classes K --train N [--val M] [--seed S]`: renders and encodes
// the images on a pool of threads, each image a pure function of (seed, split, index).
#include "tools/cli/MakeImagesCommand.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"
#include "tools/cli/PatternImages.hpp"

namespace vdnn::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSplits[] = {"train", "val"};
constexpr std::int64_t kMaxSide = 4096;

std::string class_name(std::int32_t label) {
  char name[16];
  std::snprintf(name, sizeof name, "n%04d", static_cast<int>(label));
  return name;
}

// What the workers wrote, summed at the end.
struct Tally {
  std::int64_t images = 0;
  std::int64_t bytes = 0;
  std::int64_t per_kind[5] = {};

  void add(const Tally& other) {
    images += other.images;
    bytes += other.bytes;
    for (int k = 0; k < 5; ++k) per_kind[k] += other.per_kind[k];
  }
};

// The images of both splits, numbered split-major, classes interleaved within a split (so the
// stored kinds, assigned per hundred indices, spread over the classes).
class ImageJobs {
 public:
  explicit ImageJobs(const MakeImagesOptions& o) : o_(o) {}
  std::int64_t count() const { return (o_.train + o_.val) * o_.classes; }

  // Renders, encodes and writes job `job`; adds it to `tally`.
  void write(std::int64_t job, Tally& tally) const {
    const std::int64_t train_jobs = o_.train * o_.classes;
    const int split = job < train_jobs ? 0 : 1;
    const std::int64_t index = split == 0 ? job : job - train_jobs;
    const auto label = static_cast<std::int32_t>(index % o_.classes);
    const std::uint64_t image_seed =
        runtime::mix64(runtime::mix64(runtime::mix64(o_.seed) ^ static_cast<std::uint64_t>(split)) ^
                       static_cast<std::uint64_t>(index));
    const StoredKind kind = stored_kind(o_.seed ^ static_cast<std::uint64_t>(split), index);
    const std::vector<std::uint8_t> file = encode_pattern(
        render_pattern(label, image_seed, o_.min_side, o_.max_side), kind, image_seed);
    char key[32];
    std::snprintf(key, sizeof key, "_%06lld", static_cast<long long>(index / o_.classes));
    const fs::path path = fs::path(o_.out) / kSplits[split] / class_name(label) /
                          (class_name(label) + key + file_extension(kind));
    std::ofstream stream(path, std::ios::binary);
    if (!stream.write(reinterpret_cast<const char*>(file.data()),
                      static_cast<std::streamsize>(file.size())) ||
        !stream.flush()) {
      throw runtime::Error("make-images: cannot write " + path.string());
    }
    tally.images += 1;
    tally.bytes += static_cast<std::int64_t>(file.size());
    tally.per_kind[static_cast<int>(kind)] += 1;
  }

 private:
  const MakeImagesOptions& o_;
};

// Runs every job on `threads` threads; rethrows the first error after all stopped.
Tally run_jobs(const ImageJobs& jobs, std::int64_t threads) {
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
  Tally total;
  const auto worker = [&] {
    Tally tally;
    try {
      for (std::int64_t job = next++; job < jobs.count() && !failed; job = next++) {
        jobs.write(job, tally);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
    const std::lock_guard<std::mutex> lock(mutex);
    total.add(tally);
  };
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return total;
}

// Checks --out and creates the class folders.
void prepare_folders(const MakeImagesOptions& o) {
  const fs::path out(o.out);
  if (fs::exists(out) && !fs::is_directory(out)) {
    throw runtime::InvalidArgument("--out " + o.out + " exists and is not a directory");
  }
  if (fs::exists(out) && !fs::is_empty(out)) {
    if (!o.force) {
      throw runtime::InvalidArgument("--out " + o.out +
                                     " exists and is not empty; pass --force to replace its "
                                     "train/ and val/ folders");
    }
    for (const char* split : kSplits) fs::remove_all(out / split);
  }
  for (int split = 0; split < 2; ++split) {
    if ((split == 0 ? o.train : o.val) == 0) continue;
    for (std::int32_t label = 0; label < o.classes; ++label) {
      fs::create_directories(out / kSplits[split] / class_name(label));
    }
  }
}

void print_summary(const MakeImagesOptions& o, const Tally& t, double seconds) {
  std::printf(
      "vdnn: wrote %lld images (%d classes; %lld train, %lld val per class) to %s in %.1f s: "
      "average %.1f KB; %lld grayscale, %lld CMYK, %lld progressive, %lld PNG\n",
      static_cast<long long>(t.images), static_cast<int>(o.classes),
      static_cast<long long>(o.train), static_cast<long long>(o.val), o.out.c_str(), seconds,
      t.images > 0 ? static_cast<double>(t.bytes) / static_cast<double>(t.images) / 1000.0 : 0.0,
      static_cast<long long>(t.per_kind[static_cast<int>(StoredKind::GrayJpeg)]),
      static_cast<long long>(t.per_kind[static_cast<int>(StoredKind::CmykJpeg)]),
      static_cast<long long>(t.per_kind[static_cast<int>(StoredKind::ProgressiveJpeg)]),
      static_cast<long long>(t.per_kind[static_cast<int>(StoredKind::Png)]));
}

}  // namespace

CLI::App* add_make_images_command(CLI::App& app, MakeImagesOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "make-images",
      "Write a generated ImageFolder (DIR/train/<class>/*.jpg, DIR/val/...) of learnable "
      "JPEG/PNG images with ImageNet-like sizes");
  cmd->add_option("--out", o.out, "Folder to write (must not exist or be empty)")->required();
  cmd->add_option("--classes", o.classes, "Classes, each a distinct pattern")
      ->required()
      ->check(CLI::Range(1, kMaxPatternClasses));
  cmd->add_option("--train", o.train, "Training images per class")
      ->required()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
  cmd->add_option("--val", o.val, "Validation images per class (default 0: no val/)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
  cmd->add_option("--seed", o.seed, "Every image is a pure function of the seed (default 0)");
  cmd->add_option("--min-side", o.min_side, "Smallest shorter side in pixels (default 200)")
      ->check(CLI::Range(std::int64_t{8}, kMaxSide));
  cmd->add_option("--max-side", o.max_side, "Largest shorter side in pixels (default 500)")
      ->check(CLI::Range(std::int64_t{8}, kMaxSide));
  cmd->add_option("--threads", o.threads, "Writer threads (default 0: one per hardware thread)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1024}));
  cmd->add_flag("--force", o.force, "Replace DIR/train and DIR/val when DIR is not empty");
  return cmd;
}

int run_make_images(const MakeImagesOptions& o) {
  if (o.min_side > o.max_side) {
    throw runtime::InvalidArgument("--min-side " + std::to_string(o.min_side) +
                                   " is over --max-side " + std::to_string(o.max_side));
  }
  if (o.train + o.val == 0) throw runtime::InvalidArgument("--train and --val are both 0");
  prepare_folders(o);
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t threads =
      o.threads > 0 ? o.threads : std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  const Tally tally = run_jobs(ImageJobs(o), threads);
  print_summary(o, tally,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace vdnn::tools
