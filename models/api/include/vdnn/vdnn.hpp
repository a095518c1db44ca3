// The vdnn library in one include: networks (built in code or from JSON configs), training runs
// under a memory policy and budget, checkpoints, and the errors they throw.
#pragma once

#include <vdnn/Error.hpp>
#include <vdnn/Network.hpp>
#include <vdnn/Trainer.hpp>
#include <vdnn/Version.hpp>
