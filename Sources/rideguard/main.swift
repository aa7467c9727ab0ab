import RideGuardCommands

await RideGuard.start()
