/* A custom-call library built for another ABI version. */
#include <stdint.h>
int32_t tessel_custom_call_abi_version(void) { return 99; }
