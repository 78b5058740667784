// The functions are static inline in include/FloatControl.h; SwiftPM needs one source file per C target.
#include "FloatControl.h"
