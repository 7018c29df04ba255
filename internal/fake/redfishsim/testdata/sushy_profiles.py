"""Boot emulated vendor profiles with Debian's python3-sushy the way
OpenStack Ironic's redfish-virtual-media interface does (the first CD/DVD
virtual media slot under the System's Manager; InsertMedia, or a PATCH of
the slot where it has no such action; a one-time Cd boot, with
BootSourceOverrideMode for the vendors Ironic sends it to; power on), so
that the emulator's profiles are checked against a real Redfish client.
sushy 4.3.3 predates virtual media under the System: for a BMC with it
there, only the boot override is set.

Usage: sushy_profiles.py USER PASSWORD IMAGE_URL NAME=BASE_URL,SYSTEM_ID,FULL_BOOT...
Prints "NAME SUSHY ..." lines; an error from a BMC is printed, not raised.
"""
import sys

import sushy
from sushy import auth

user, password, image = sys.argv[1:4]
for arg in sys.argv[4:]:
    name, rest = arg.split("=", 1)
    base, system_id, full = rest.split(",")

    def say(*words):
        print(name, "SUSHY", *words, flush=True)

    try:
        conn = sushy.Sushy(base + "/redfish/v1",
                           auth=auth.SessionOrBasicAuth(username=user, password=password))
        system = conn.get_system("/redfish/v1/Systems/" + system_id)
        say("manufacturer", system.manufacturer)
        try:
            slots = system.managers[0].virtual_media.get_members()
        except sushy.exceptions.MissingAttributeError:
            slots = []
            say("no-manager-virtual-media")
        cd = None
        for vm in slots:
            types = vm.media_types or []
            if sushy.VIRTUAL_MEDIA_CD in types or sushy.VIRTUAL_MEDIA_DVD in types:
                cd = vm
                break
        if cd is not None:
            cd.insert_media(image, inserted=True, write_protected=True)
            cd.refresh()
            say("inserted", cd.path, cd.inserted, cd.image)
        if full == "full":
            system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD, enabled=sushy.BOOT_SOURCE_ENABLED_ONCE,
                                           mode=system.boot.mode or sushy.BOOT_SOURCE_MODE_UEFI)
        else:
            system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD, enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
        system.reset_system(sushy.RESET_ON)
        say("reset")
    except sushy.exceptions.HTTPError as e:
        say("error", type(e).__name__, e.status_code, e.code)
    say("done")
