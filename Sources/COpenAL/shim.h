#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
