// PLACEHOLDER so the target has a source.
namespace vdnn::models {}
