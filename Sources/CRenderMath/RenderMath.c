// The functions are static inline in include/RenderMath.h; SwiftPM needs one source file per C target.
#include "RenderMath.h"
