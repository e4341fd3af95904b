"""Checks Cloud Monitoring and Cloud Logging config files against the APIs' schemas.

Run it with gcloud's bundled Python (`gcloud info --format='value(basic.python_location)'`):

    python3 check.py SDK_ROOT KIND=FILE [KIND=FILE ...]

SDK_ROOT is gcloud's installation directory (`gcloud info --format='value(installation.sdk_root)'`).
KIND is one of alert-policy, dashboard, log-metric, bucket-lifecycle. Prints one JSON object per
file, {"file": ..., "kind": ..., "errors": [...]}, and exits 1 if any file has
an error (2 on bad usage).

The files are decoded exactly as gcloud decodes them before it calls the API
(`alpha monitoring policies create --policy-from-file` goes through
command_lib/monitoring/util.py MessageFromString, i.e. PyValueToMessage, and
`logging metrics create --config-from-file` through DictToMessage, the same
decoder), with gcloud's own generated message classes. That decoder raises on
a wrong type, but keeps unknown fields and unknown enum values aside as
"unrecognized" without a word; gcloud then sends them on and the API refuses
them (or, for an enum, may drop them). So every message of the decoded tree is
walked and any unrecognized field fails the file.

A bucket-lifecycle file (`gcloud storage buckets create/update --lifecycle-file`)
goes through gcloud's own converter for that flag,
api_lib/storage/gcs_json/metadata_field_converters.py process_lifecycle (the
file read as gcloud reads it, {"rule": [...]} or {"lifecycle": {"rule": [...]}},
decoded into the Bucket.LifecycleValue message with DictToMessageWithErrorCheck,
which refuses unknown fields itself). Its error only says "invalid JSON/YAML",
so the decoder's own DecodeError (the exception's context) is reported too.
The API's action type and storage classes are plain strings in its schema: no
decoder checks their values (the API does, at the call).
"""

import json
import os
import sys


def load_sdk(sdk_root):
    lib = os.path.join(sdk_root, 'lib')
    sys.path[:0] = [lib, os.path.join(lib, 'third_party')]
    from apitools.base.protorpclite import messages  # noqa: E402  (needs the path above)
    from apitools.base.py import encoding  # noqa: E402
    from googlecloudsdk.generated_clients.apis.logging.v2 import logging_v2_messages  # noqa: E402
    from googlecloudsdk.generated_clients.apis.monitoring.v1 import monitoring_v1_messages  # noqa: E402
    from googlecloudsdk.generated_clients.apis.monitoring.v3 import monitoring_v3_messages  # noqa: E402
    from googlecloudsdk.api_lib.storage.gcs_json import metadata_field_converters  # noqa: E402
    kinds = {
        'alert-policy': monitoring_v3_messages.AlertPolicy,
        'dashboard': monitoring_v1_messages.Dashboard,
        'log-metric': logging_v2_messages.LogMetric,
        'bucket-lifecycle': metadata_field_converters.process_lifecycle,
    }
    return messages, encoding, kinds


def unrecognized(messages, message, path):
    """Every unrecognized field in the message tree, as 'path: what'."""
    found = []
    declared = {f.name for f in message.all_fields()}
    for name in message.all_unrecognized_fields():
        value, _ = message.get_unrecognized_field_info(name)
        what = 'invalid enum value' if name in declared else 'unknown field'
        found.append('%s.%s: %s (value %s)' % (path, name, what, json.dumps(value, default=str)[:200]))
    for field in message.all_fields():
        if not isinstance(field, messages.MessageField):
            continue
        value = message.get_assigned_value(field.name)
        if value is None:
            continue
        items = value if field.repeated else [value]
        for index, item in enumerate(items):
            where = '%s.%s[%d]' % (path, field.name, index) if field.repeated else '%s.%s' % (path, field.name)
            if isinstance(item, messages.Message):
                found.extend(unrecognized(messages, item, where))
    return found


def check_with_converter(messages, convert, file):
    """A file gcloud reads itself (a path flag): its converter, then the walk."""
    try:
        decoded = convert(file)
    except Exception as err:  # pylint: disable=broad-except  (any converter error is the answer)
        cause = err.__cause__ or err.__context__
        detail = ' (%s: %s)' % (type(cause).__name__, cause) if cause is not None else ''
        return ['%s: %s%s' % (type(err).__name__, err, detail)]
    if decoded is None:
        return ['empty: gcloud takes an empty lifecycle file as --clear-lifecycle']
    return unrecognized(messages, decoded, type(decoded).__name__)


def check(messages, encoding, message_type, file):
    if not isinstance(message_type, type):
        return check_with_converter(messages, message_type, file)
    try:
        with open(file, encoding='utf-8') as handle:
            value = json.load(handle)
    except (OSError, ValueError) as err:
        return ['not readable JSON: %s' % err]
    try:
        decoded = encoding.PyValueToMessage(message_type, value)
    except Exception as err:  # pylint: disable=broad-except  (any decoder error is the answer)
        return ['%s: %s' % (type(err).__name__, err)]
    return unrecognized(messages, decoded, message_type.__name__)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write('usage: check.py SDK_ROOT KIND=FILE [KIND=FILE ...]\n')
        return 2
    messages, encoding, kinds = load_sdk(argv[0])
    failed = False
    for arg in argv[1:]:
        kind, sep, file = arg.partition('=')
        if sep == '' or kind not in kinds:
            sys.stderr.write('check.py: expected KIND=FILE with KIND one of %s, got %s\n' % (', '.join(sorted(kinds)), arg))
            return 2
        errors = check(messages, encoding, kinds[kind], file)
        failed = failed or len(errors) > 0
        print(json.dumps({'file': file, 'kind': kind, 'errors': errors}))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
