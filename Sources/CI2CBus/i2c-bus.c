// SPDX-License-Identifier: Apache-2.0
#include "CI2CBus.h"
#include <errno.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <sys/ioctl.h>

int rg_i2c_select(int fd, int address) {
    return ioctl(fd, I2C_SLAVE, address) < 0 ? -errno : 0;
}

int rg_i2c_read_byte_data(int fd, int reg) {
    union i2c_smbus_data data;
    struct i2c_smbus_ioctl_data request = {
        .read_write = I2C_SMBUS_READ, .command = (__u8)reg, .size = I2C_SMBUS_BYTE_DATA, .data = &data,
    };
    return ioctl(fd, I2C_SMBUS, &request) < 0 ? -errno : data.byte;
}
