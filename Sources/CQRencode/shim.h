// SPDX-License-Identifier: Apache-2.0
// libqrencode 4.1 (Debian bookworm and trixie, Raspberry Pi OS): text to a QR code's modules.
#ifndef RIDEGUARD_CQRENCODE_SHIM_H
#define RIDEGUARD_CQRENCODE_SHIM_H
#include <errno.h>
#include <qrencode.h>
#include <stddef.h>

/// Encodes `length` bytes of UTF-8 in byte mode, behind an ECI header (26: UTF-8) so that decoders
/// read accents and other scripts as the text they are. Error correction M: 15 % of the code can be
/// scratched off a helmet and it still reads. NULL with errno set (ERANGE: too long) on failure.
static inline QRcode *rg_qr_encode_utf8(const unsigned char *bytes, int length) {
    QRinput *input = QRinput_new2(0, QR_ECLEVEL_M);
    if (input == NULL) return NULL;
    QRcode *code = NULL;
    if (QRinput_appendECIheader(input, 26) == 0 && QRinput_append(input, QR_MODE_8, length, bytes) == 0) {
        code = QRcode_encodeInput(input);
    }
    int saved = errno;
    QRinput_free(input);
    errno = saved;
    return code;
}
#endif
