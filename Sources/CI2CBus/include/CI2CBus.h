// SPDX-License-Identifier: Apache-2.0
// One SMBus register read from a chip on a Linux I²C bus (/dev/i2c-N): what `rideguard doctor`
// needs to tell which IMU answers where no driver has claimed it. Nothing is ever written to a chip.
#ifndef RIDEGUARD_I2C_BUS_H
#define RIDEGUARD_I2C_BUS_H

/// Selects the chip at `address` on the open bus `fd` without taking it from a driver (I2C_SLAVE,
/// not I2C_SLAVE_FORCE: EBUSY when a driver has claimed it). 0, or -errno.
int rg_i2c_select(int fd, int address);

/// Reads register `reg` of the selected chip (SMBus read byte data, as i2c-stub and every I²C
/// adapter serve). The byte (0-255), or -errno.
int rg_i2c_read_byte_data(int fd, int reg);

#endif
