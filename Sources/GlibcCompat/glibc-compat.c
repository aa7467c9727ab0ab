// SPDX-License-Identifier: Apache-2.0
// Raspberry Pi OS bookworm has glibc 2.36 and GCC 12's libstdc++. The only aarch64 Swift runtime
// Debian ships (sid's swiftlang, scripts/sysroot.sh) was compiled against glibc 2.41 and GCC 14's
// headers, which turn strtol, strtoll, strtoul and sscanf into their C23 entry points (__isoc23_*,
// glibc 2.38), use strlcpy and strlcat (glibc 2.38), and make <iostream> call
// std::ios_base_library_init() (libstdc++ 13). Linked against an older glibc, this file gives the
// runtime those names; against glibc 2.38 or newer it is empty and the C library's own are used.
//  - The C23 functions differ from the old ones only in also reading a "0b" binary prefix, which
//    nothing in the runtime writes.
//  - strlcpy and strlcat are the BSD functions glibc 2.38 adopted.
//  - ios_base_library_init only makes sure the standard streams are set up before use; the
//    runtime's one caller (ICU's UnicodeString stream operators) writes to a stream it is given,
//    and GCC 12's libstdc++ sets the standard streams up itself.
#include <features.h>
#if defined(__GLIBC__) && !__GLIBC_PREREQ(2, 38)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long __isoc23_strtol(const char *text, char **end, int base);
long long __isoc23_strtoll(const char *text, char **end, int base);
unsigned long __isoc23_strtoul(const char *text, char **end, int base);
unsigned long long __isoc23_strtoull(const char *text, char **end, int base);
int __isoc23_sscanf(const char *text, const char *format, ...);
size_t strlcpy(char *destination, const char *source, size_t size);
size_t strlcat(char *destination, const char *source, size_t size);
void _ZSt21ios_base_library_initv(void);

long __isoc23_strtol(const char *text, char **end, int base) { return strtol(text, end, base); }
long long __isoc23_strtoll(const char *text, char **end, int base) { return strtoll(text, end, base); }
unsigned long __isoc23_strtoul(const char *text, char **end, int base) { return strtoul(text, end, base); }
unsigned long long __isoc23_strtoull(const char *text, char **end, int base) { return strtoull(text, end, base); }

int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int count = vsscanf(text, format, arguments);
    va_end(arguments);
    return count;
}

size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}

size_t strlcat(char *destination, const char *source, size_t size) {
    size_t used = strnlen(destination, size);
    if (used == size) return size + strlen(source);
    return used + strlcpy(destination + used, source, size - used);
}

void _ZSt21ios_base_library_initv(void) {}
#endif
