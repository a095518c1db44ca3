// Launcher: `vdnn train --gpus N` on one host: N processes of this executable, one per GPU, each
// told its rank as torchrun would, watched until all end (issue 27).
#pragma once

namespace vdnn::tools {

/// Seconds the launcher gives the other ranks to stop (SIGTERM) after one failed, before it
/// kills them (SIGKILL).
inline constexpr int kLaunchGraceSeconds = 10;

/// Runs this executable with this process's arguments (/proc/self/cmdline) as `ranks` processes,
/// each with RANK, WORLD_SIZE, LOCAL_RANK (its GPU), MASTER_ADDR=127.0.0.1 and MASTER_PORT (a
/// free port) in its environment, each in a process group of its own and sent SIGTERM if the
/// launcher dies, and waits for all. When one exits non-zero or dies, the others get SIGTERM,
/// then SIGKILL after kLaunchGraceSeconds; every child is reaped. SIGINT or SIGTERM to the
/// launcher is passed on to every rank once (each stops after its step, rank 0 writing a
/// checkpoint). Returns kExitOk when every rank exited 0, else kExitRankFailed after naming on
/// stderr the first rank that failed and how; throws Interrupted when a signal stopped them all.
/// Throws runtime::Error when a process cannot be started (the ones started are killed and
/// reaped first).
int launch_local_ranks(int ranks);

}  // namespace vdnn::tools
