/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An ADXL345 as a PC's firmware declares one, for RideGuard's VM test (scripts/vm-test.sh boots
 * qemu with it as an extra SSDT). Linux 6.1's adxl345 driver takes the chip's type only from the
 * firmware (a device tree, or this ACPI id), so a chip made from userspace never binds; the test's
 * rideguard-int-wire module gives the chip it makes on i2c-stub this node. The I2cSerialBus
 * resource keeps ACPI from making a platform device of it (a serial-bus device is its bus's to
 * enumerate); no I2C controller in the VM is its ResourceSource, so none does.
 */
DefinitionBlock ("", "SSDT", 2, "RGUARD", "ADXL345", 1)
{
    External (\_SB.PCI0, DeviceObj)
    Scope (\_SB)
    {
        Device (ADXL)
        {
            Name (_HID, "ADS0345")
            Name (_UID, One)
            Name (_CRS, ResourceTemplate ()
            {
                I2cSerialBusV2 (0x0053, ControllerInitiated, 400000, AddressingMode7Bit, "\\_SB.PCI0", 0x00, ResourceConsumer, , Exclusive, )
            })
        }
    }
}
