//===- tessel-tokenize.cpp - byte-level tokenizer for token files ---------===//
//
//   tessel-tokenize text.txt -o train.bin [--val val.bin --val-fraction 0.1]
//   tessel-tokenize --decode train.bin [--count N]
//
// Every byte of the text is one token (vocabulary 256), written as flat
// little-endian uint16 — the nanoGPT .bin format the runtime's --data and
// tessel-interp's --tokens read. The last --val-fraction of the text goes to
// --val. --decode prints a token file back as text.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "tessel/support/SafeTensors.h"

namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-tokenize options");
static cl::opt<std::string> input(cl::Positional, cl::Required,
                                  cl::desc("<text file, or token file with "
                                           "--decode>"),
                                  cl::cat(category));
static cl::opt<std::string> output("o", cl::desc("Token file to write"),
                                   cl::value_desc("train.bin"),
                                   cl::cat(category));
static cl::opt<std::string> valOutput("val",
                                      cl::desc("Token file for the held-out "
                                               "tail of the text"),
                                      cl::cat(category));
static cl::opt<double> valFraction("val-fraction",
                                   cl::desc("Fraction of the text for --val"),
                                   cl::init(0.1), cl::cat(category));
static cl::opt<bool> decode("decode", cl::desc("Print a token file as text"),
                            cl::cat(category));
static cl::opt<uint64_t> count("count",
                               cl::desc("With --decode: at most N tokens"),
                               cl::init(0), cl::cat(category));

static int failWith(const llvm::Twine &message) {
  llvm::errs() << "tessel-tokenize: error: " << message << "\n";
  return 1;
}

static std::string encode(llvm::StringRef text) {
  std::string bytes;
  bytes.reserve(text.size() * 2);
  for (unsigned char c : text) {
    bytes.push_back(char(c));
    bytes.push_back(0);
  }
  return bytes;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Byte-level tokenizer\n");
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!buffer)
    return failWith(input + ": " + buffer.getError().message());
  llvm::StringRef data = (*buffer)->getBuffer();
  if (decode) {
    if (data.size() % 2)
      return failWith(input + ": " + llvm::Twine(data.size()) +
                      " bytes is not a whole number of uint16 tokens");
    uint64_t n = data.size() / 2;
    if (count && count < n)
      n = count;
    for (uint64_t i = 0; i < n; ++i) {
      unsigned token = uint8_t(data[2 * i]) | uint8_t(data[2 * i + 1]) << 8;
      if (token > 255)
        return failWith(input + ": token " + llvm::Twine(token) +
                        " at position " + llvm::Twine(i) +
                        " is not a byte; this file was not written by "
                        "tessel-tokenize");
      llvm::outs() << char(token);
    }
    return 0;
  }
  if (output.empty())
    return failWith("give the token file to write with -o");
  if (valFraction < 0 || valFraction >= 1)
    return failWith("--val-fraction must be in [0, 1)");
  size_t split = valOutput.empty()
                     ? data.size()
                     : data.size() - size_t(data.size() * valFraction);
  if (llvm::Error err =
          tessel::writeFileAtomically(output, encode(data.take_front(split))))
    return failWith(llvm::toString(std::move(err)));
  llvm::outs() << output << ": " << split << " tokens (vocabulary 256)\n";
  if (!valOutput.empty()) {
    if (llvm::Error err = tessel::writeFileAtomically(
            valOutput, encode(data.drop_front(split))))
      return failWith(llvm::toString(std::move(err)));
    llvm::outs() << valOutput << ": " << data.size() - split << " tokens\n";
  }
  return 0;
}
