// Tests of the capped reader every user-given file goes through
// (src/util/read_file.h): the cap holds while reading, and a directory, a
// FIFO with no writer, a character device or a missing file each give one
// reason, at once.
#include "util/read_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "util/bytes.h"

namespace gd {
namespace {

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gd-read-file-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const char* f : {"/f", "/fifo"}) std::remove((dir_ + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& text) {
    std::ofstream(dir_ + "/f") << text;
    return dir_ + "/f";
  }
  std::string dir_;
};

TEST_F(ReadFile, RegularFileUpToTheCap) {
  auto r = read_file_capped(write("0123456789"), 10);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, "0123456789");
  auto over = read_file_capped(write("0123456789A"), 10);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error(), "over the 10 B limit");
  auto empty = read_file_capped(write(""), 10);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST_F(ReadFile, EndlessDeviceStopsAtTheCap) {
  auto r = read_file_capped("/dev/zero", size_t{1} << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "over the 1 MiB limit");
  auto null = read_file_capped("/dev/null", 10);
  ASSERT_TRUE(null.ok());
  EXPECT_EQ(*null, "");
}

TEST_F(ReadFile, EndlessPipeStopsAtTheCap) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::thread writer([fd = p[1]] {
    std::string chunk(4096, 'y');
    // Writes until the reader closes its end (EPIPE; SIGPIPE is ignored below).
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  auto old = signal(SIGPIPE, SIG_IGN);
  auto r = read_fd_capped(p[0], 256 << 10);
  ::close(p[0]);
  writer.join();
  signal(SIGPIPE, old);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "over the 256 KiB limit");
}

TEST_F(ReadFile, DirectoryAndMissingFile) {
  auto d = read_file_capped(dir_, 10);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "Is a directory");
  auto m = read_file_capped(dir_ + "/nope", 10);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error(), "No such file or directory");
}

// Opening a FIFO for reading waits for a writer; with none it must not.
TEST_F(ReadFile, FifoWithoutWriterReadsEmptyAtOnce) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  auto r = read_file_capped(fifo, 10);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, "");
  EXPECT_LT(took, std::chrono::seconds(1));
}

// A FIFO whose writer is slow to write is still read: reads block once the
// file is open. The test's own read-write descriptor is that writer.
TEST_F(ReadFile, FifoWithASlowWriterIsRead) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  int w = ::open(fifo.c_str(), O_RDWR);  // Linux: opens a FIFO at once, as reader and writer
  ASSERT_GE(w, 0);
  std::thread writer([w] {
    // Long enough for the reader below to have opened the FIFO first.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(::write(w, "hello\n", 6), 6);
    ::close(w);
  });
  auto r = read_file_capped(fifo, 10);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, "hello\n");
}

TEST(CapText, NamesTheCapInItsUnit) {
  EXPECT_EQ(format_bytes_exact(size_t{64} << 20), "64 MiB");
  EXPECT_EQ(format_bytes_exact(size_t{1} << 20), "1 MiB");
  EXPECT_EQ(format_bytes_exact(64 << 10), "64 KiB");
  EXPECT_EQ(format_bytes_exact(100), "100 B");
}

}  // namespace
}  // namespace gd
