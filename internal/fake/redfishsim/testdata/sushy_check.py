"""Drive the Redfish BMC emulator with Debian's python3-sushy, the library
OpenStack Ironic uses against real BMCs: the same calls agentiso boot makes
(find the CD slot under the Manager, insert, one-time boot to CD, power on,
eject) must work through it.

Usage: sushy_check.py BASE_URL USER PASSWORD IMAGE_URL SYSTEM_ID
Prints one SUSHY line per step; exits non-zero on the first failure.
"""
import sys

import sushy
from sushy import auth

base, user, password, image, system_id = sys.argv[1:6]
conn = sushy.Sushy(base + "/redfish/v1",
                   auth=auth.SessionOrBasicAuth(username=user, password=password))
print("SUSHY root", conn.redfish_version, flush=True)
members = conn.get_system_collection().get_members()
print("SUSHY systems", sorted(m.identity for m in members), flush=True)
system = conn.get_system("/redfish/v1/Systems/" + system_id)
print("SUSHY power", system.power_state.value, flush=True)
print("SUSHY reset-allowed", sorted(v.value for v in system.get_allowed_reset_system_values()), flush=True)
manager = system.managers[0]
cd = None
for vm in manager.virtual_media.get_members():
    if sushy.VIRTUAL_MEDIA_CD in (vm.media_types or []):
        cd = vm
if cd is None:
    sys.exit("no CD virtual media under the manager")
print("SUSHY cd", cd.path, cd.inserted, flush=True)
cd.insert_media(image, inserted=True, write_protected=True)
cd.refresh()
if not cd.inserted or cd.image != image:
    sys.exit("inserted=%s image=%s" % (cd.inserted, cd.image))
print("SUSHY inserted", cd.image, flush=True)
system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD, enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
system.refresh()
print("SUSHY boot", system.boot.enabled.value, system.boot.target.value, flush=True)
system.reset_system(sushy.RESET_ON)
system.refresh()
print("SUSHY power", system.power_state.value, flush=True)
cd.eject_media()
cd.refresh()
print("SUSHY ejected", cd.inserted, flush=True)
try:
    sushy.Sushy(base + "/redfish/v1",
                auth=auth.BasicAuth(username=user, password=password + "-wrong")).get_system(
        "/redfish/v1/Systems/" + system_id)
    sys.exit("a wrong password was accepted")
except sushy.exceptions.AccessError as e:
    print("SUSHY wrong-password", type(e).__name__, e.status_code, flush=True)
print("SUSHY-OK", flush=True)
