// The vdnn library in one include: networks (built in code or from JSON configs), training runs
// under a memory policy and budget on their own data or the caller's, checkpoints, inference, and
// the errors they throw.
#pragma once

#include <vdnn/Batch.hpp>
#include <vdnn/DataSource.hpp>
#include <vdnn/Error.hpp>
#include <vdnn/Network.hpp>
#include <vdnn/Predictor.hpp>
#include <vdnn/Trainer.hpp>
#include <vdnn/Version.hpp>
