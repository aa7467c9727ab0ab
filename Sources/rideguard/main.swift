// SPDX-License-Identifier: Apache-2.0
import RideGuardCommands

await RideGuard.start()
