//===- SaveCheckpoint.cpp - every rank writes its shard of a checkpoint ---===//
//
// Each carried tensor (parameters, optimizer state; a tensor two pipeline
// stages hold, once) gets one owner rank, largest tensors first, each to
// the rank with the fewest bytes so far: every rank computes the same plan
// from the program description. The owner receives one copy of each
// distinct block from the ranks of the tensor's entry (a block replicated
// over data parallelism is sent once), assembles the global tensor and
// writes its shard, model-0000k-of-0000n.safetensors, into the step's
// temporary directory, in parallel with the other owners. Rank 0 then
// writes the index (tensor -> shard) and moves the step into place, as
// Hugging Face's sharded checkpoints and torch.distributed.checkpoint do:
// no rank holds more than its share, and no rank writes all of it.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "tessel/runtime/Checkpoint.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <unistd.h>

using namespace tessel;
using namespace tessel::rt;
using program::TensorInfo;

namespace {

/// A tensor of the checkpoint and the rank that writes it.
struct Piece {
  const EntryRun *entry;
  size_t result;
  int64_t tag; ///< message tag: its result's index over all entries
  int64_t owner = 0;
  const TensorInfo &info() const { return entry->entry->results[result]; }
  uint64_t globalBytes() const {
    return numElements(info().globalShape) * byteSize(info().dtype);
  }
};

std::vector<Piece> planShards(const Run &run, int64_t ranks) {
  std::vector<Piece> pieces;
  std::set<std::string> seen; // a tensor two stages hold: the first's
  int64_t tag = 0;
  for (const EntryRun &e : run.entries)
    for (size_t r = 0; r < e.entry->results.size(); ++r, ++tag)
      if (e.roles.feeds[r] && seen.insert(e.entry->results[r].name).second)
        pieces.push_back({&e, r, tag});
  std::vector<size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pieces[a].globalBytes() > pieces[b].globalBytes();
  });
  std::vector<uint64_t> load(ranks, 0);
  for (size_t i : order) {
    int64_t best = std::min_element(load.begin(), load.end()) - load.begin();
    pieces[i].owner = best;
    load[best] += pieces[i].globalBytes();
  }
  return pieces;
}

/// The mesh position that sends each distinct block of `p`: the owner's own
/// where it holds that block, else the first position holding it.
std::map<std::vector<int64_t>, int64_t> blockSources(const Piece &p) {
  const program::MeshInfo &mesh = *p.entry->mesh;
  std::vector<int64_t> ranks = mesh.ranks();
  std::map<std::vector<int64_t>, int64_t> sources;
  for (int64_t pos = 0; pos < int64_t(ranks.size()); ++pos) {
    auto [it, fresh] = sources.emplace(
        program::blockCoordinates(p.info(), mesh.shape, pos), pos);
    if (!fresh && ranks[pos] == p.owner)
      it->second = pos;
  }
  return sources;
}

/// Writes this rank's shard (the pieces it owns), assembled from the blocks
/// the other ranks send; sends this rank's blocks to their owners.
void writeShard(const Run &run, Communicator &comm, const EntryRun &mine,
                llvm::function_ref<const uint8_t *(size_t)> local,
                const std::vector<Piece> &pieces, llvm::StringRef path) {
  int64_t me = comm.rank();
  std::vector<Request> sends;
  for (const Piece &p : pieces) {
    if (p.entry != &mine || p.owner == me || p.info().bytes() == 0)
      continue;
    std::vector<int64_t> ranks = p.entry->mesh->ranks();
    for (const auto &[coords, pos] : blockSources(p))
      if (ranks[pos] == me)
        sends.push_back(comm.startSend(local(p.result), p.info().bytes(),
                                       p.owner, p.tag, comm.world()));
  }
  std::vector<std::vector<uint8_t>> globals;
  std::vector<RawTensor> owned;
  for (const Piece &p : pieces) {
    if (p.owner != me)
      continue;
    const TensorInfo &info = p.info();
    std::vector<uint8_t> &global = globals.emplace_back(p.globalBytes());
    std::vector<uint8_t> block(info.bytes());
    std::vector<int64_t> ranks = p.entry->mesh->ranks();
    for (const auto &[coords, pos] : blockSources(p)) {
      if (info.bytes() == 0)
        break;
      const uint8_t *from = block.data();
      if (ranks[pos] == me)
        from = local(p.result);
      else
        comm.recv(block.data(), info.bytes(), ranks[pos], p.tag,
                  comm.world());
      program::placeBlockBytes(from, info, p.entry->mesh->shape, pos,
                               global.data());
    }
    owned.push_back({info.name, info.dtype, info.globalShape, global.data()});
  }
  if (!owned.empty())
    if (llvm::Error err = writeSafeTensors(path, owned))
      comm.fail(llvm::toString(std::move(err)));
  comm.waitAll(sends);
}

} // namespace

void rt::saveCheckpoint(Run &run, Communicator &comm, const EntryRun &mine,
                        llvm::function_ref<const uint8_t *(size_t)> local,
                        int64_t stepsDone) {
  const std::string &dir = run.options.ckptDir;
  // The temporary directory is named after rank 0's process.
  int64_t pid = ::getpid();
  std::vector<int64_t> pids(comm.size());
  comm.allGather(&pid, pids.data(), sizeof(int64_t), comm.world());
  std::string temp =
      checkpointTempDir(dir, stepsDone, std::to_string(pids.front()));
  if (comm.rank() == 0) {
    // Tests: a slow disk (TESSEL_TEST_CHECKPOINT_DELAY_S seconds more).
    if (const char *delay = std::getenv("TESSEL_TEST_CHECKPOINT_DELAY_S"))
      std::this_thread::sleep_for(std::chrono::seconds(std::atoi(delay)));
    if (llvm::Error err = beginCheckpoint(dir, temp))
      comm.fail(llvm::toString(std::move(err)));
  }
  comm.barrier();
  std::vector<Piece> pieces = planShards(run, comm.size());
  // Shards are numbered over the ranks that own something.
  std::vector<int64_t> writers;
  for (const Piece &p : pieces)
    writers.push_back(p.owner);
  std::sort(writers.begin(), writers.end());
  writers.erase(std::unique(writers.begin(), writers.end()), writers.end());
  auto fileOf = [&](int64_t rank) {
    int64_t k = std::lower_bound(writers.begin(), writers.end(), rank) -
                writers.begin();
    return shardFileName(k, writers.size());
  };
  llvm::SmallString<256> path(temp);
  llvm::sys::path::append(path, fileOf(comm.rank()));
  writeShard(run, comm, mine, local, pieces, path);
  comm.barrier(); // every shard is written
  if (comm.rank() == 0) {
    std::map<std::string, std::string> weightMap;
    int64_t total = 0;
    for (const Piece &p : pieces) {
      weightMap[p.info().name] = fileOf(p.owner);
      total += p.globalBytes();
    }
    if (llvm::Error err = finishCheckpoint(dir, stepsDone, temp, weightMap,
                                           total, run.json))
      comm.fail(llvm::toString(std::move(err)));
    llvm::outs() << "checkpoint: " << dir << " after step " << stepsDone - 1
                 << " (" << writers.size() << " shard"
                 << (writers.size() == 1 ? "" : "s") << ")\n";
    llvm::outs().flush();
  }
  comm.barrier();
}
