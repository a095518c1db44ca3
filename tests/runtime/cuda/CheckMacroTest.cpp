// The VDNN_CHECK_* family on statuses returned by a stand-in function: the message carries the
// statement as written, the file, the line and the library's error string. Needs the CUDA
// libraries but no device, so these tests run (and can fail) on machines without a GPU.
#include "runtime/cuda/CudaCheck.hpp"

#include <gtest/gtest.h>

#include <string>

#include "runtime/Error.hpp"

namespace vdnn::runtime::cuda {
namespace {

// Stands in for a library call that returns `status`.
template <typename Status>
Status returns(Status status) {
  return status;
}

// Runs `check` and returns the CudaError message it throws (a test failure if it throws none).
template <typename Check>
std::string cuda_error_message(Check&& check) {
  try {
    check();
  } catch (const CudaError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no CudaError thrown";
  return {};
}

// "file:line:" as it appears in the message; the trailing colon keeps line 4 from matching 47.
std::string location(int line) {
  return std::string("CheckMacroTest.cpp:") + std::to_string(line) + ":";
}

TEST(CheckMacroTest, SuccessDoesNotThrowAndEvaluatesTheStatementOnce) {
  int calls = 0;
  EXPECT_NO_THROW(VDNN_CHECK_CUDA((++calls, returns(cudaSuccess))));
  EXPECT_NO_THROW(VDNN_CHECK_CUDNN((++calls, returns(CUDNN_STATUS_SUCCESS))));
  EXPECT_NO_THROW(VDNN_CHECK_CUBLAS((++calls, returns(CUBLAS_STATUS_SUCCESS))));
  EXPECT_EQ(calls, 3);
}

TEST(CheckMacroTest, CudaFailureNamesStatementLocationAndError) {
  int line = 0;
  const std::string message = cuda_error_message([&line] {
    line = __LINE__ + 1;
    VDNN_CHECK_CUDA(returns(cudaErrorInvalidValue));
  });
  EXPECT_NE(message.find("returns(cudaErrorInvalidValue) failed at"), std::string::npos) << message;
  EXPECT_NE(message.find(location(line)), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA error cudaErrorInvalidValue"), std::string::npos) << message;
  EXPECT_NE(message.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << message;
}

TEST(CheckMacroTest, CudnnFailureNamesStatementLocationAndError) {
  int line = 0;
  const std::string message = cuda_error_message([&line] {
    line = __LINE__ + 1;
    VDNN_CHECK_CUDNN(returns(CUDNN_STATUS_BAD_PARAM));
  });
  EXPECT_NE(message.find("returns(CUDNN_STATUS_BAD_PARAM) failed at"), std::string::npos)
      << message;
  EXPECT_NE(message.find(location(line)), std::string::npos) << message;
  EXPECT_NE(message.find("cuDNN error CUDNN_STATUS_BAD_PARAM"), std::string::npos) << message;
}

TEST(CheckMacroTest, CublasFailureNamesStatementLocationAndError) {
  int line = 0;
  const std::string message = cuda_error_message([&line] {
    line = __LINE__ + 1;
    VDNN_CHECK_CUBLAS(returns(CUBLAS_STATUS_INVALID_VALUE));
  });
  EXPECT_NE(message.find("returns(CUBLAS_STATUS_INVALID_VALUE) failed at"), std::string::npos)
      << message;
  EXPECT_NE(message.find(location(line)), std::string::npos) << message;
  EXPECT_NE(message.find("cuBLAS error CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << message;
  EXPECT_NE(message.find(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)), std::string::npos)
      << message;
}

// Library entry points are often macros (cublasCreate is cublasCreate_v2): the message must show
// the statement as the caller wrote it.
#define VDNN_TEST_FAILING_CALL returns(CUBLAS_STATUS_NOT_SUPPORTED)
TEST(CheckMacroTest, StatementTextIsTakenBeforeMacroExpansion) {
  const std::string message = cuda_error_message([] { VDNN_CHECK_CUBLAS(VDNN_TEST_FAILING_CALL); });
  EXPECT_NE(message.find("VDNN_TEST_FAILING_CALL failed at"), std::string::npos) << message;
}
#undef VDNN_TEST_FAILING_CALL

TEST(CheckMacroTest, NoThrowVariantsLogToStderrAndContinue) {
  testing::internal::CaptureStderr();
  VDNN_CHECK_CUDA_NOTHROW(returns(cudaErrorInvalidValue));
  VDNN_CHECK_CUDNN_NOTHROW(returns(CUDNN_STATUS_NOT_SUPPORTED));
  VDNN_CHECK_CUBLAS_NOTHROW(returns(CUBLAS_STATUS_ALLOC_FAILED));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("returns(cudaErrorInvalidValue) failed at"), std::string::npos) << log;
  EXPECT_NE(log.find("CUDNN_STATUS_NOT_SUPPORTED"), std::string::npos) << log;
  EXPECT_NE(log.find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos) << log;
  EXPECT_NE(log.find("CheckMacroTest.cpp:"), std::string::npos) << log;
}

}  // namespace
}  // namespace vdnn::runtime::cuda
