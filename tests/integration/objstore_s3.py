#!/usr/bin/env python3
"""objstore_s3.py — an in-process moto S3 server on 127.0.0.1 for the s3://
store tests, driven over stdin/stdout.

  objstore_s3.py --bucket B [--prefix P --upload DIR] [--auth]

Starts moto (any free port), creates bucket B, uploads every file under DIR
to P/<relative path>, and prints one line:

  READY <endpoint> <access key id> <secret access key>

With --auth, moto checks SigV4 signatures: an IAM user with an s3:* policy
is created first and its keys are printed (requests signed with anything
else get 403). Without --auth the keys are "testing" and not checked.

Then it reads commands from stdin, one per line, answering "OK" or "ERR msg":
  put KEY FILE     upload FILE as KEY (KEY is the full object key)
  del KEY          delete KEY
Exits when stdin closes. Exit 3 with "ERR moto missing" if moto is not
importable (pip install 'moto[server]').
"""
import argparse
import logging
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", default="")
    ap.add_argument("--upload", default=None)
    ap.add_argument("--auth", action="store_true")
    a = ap.parse_args()
    if a.auth:
        # moto reads this at import: the first 3 actions (IAM set-up) are free
        os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as e:
        print(f"ERR moto missing: {e}", flush=True)
        sys.exit(3)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    host, port = srv._server.server_address[:2]
    endpoint = f"http://{host}:{port}"
    key_id, secret = "testing", "testing"
    if a.auth:
        iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        iam.create_user(UserName="weightd")
        k = iam.create_access_key(UserName="weightd")["AccessKey"]
        iam.put_user_policy(
            UserName="weightd", PolicyName="s3",
            PolicyDocument='{"Version":"2012-10-17","Statement":[{"Effect":"Allow",'
                           '"Action":"s3:*","Resource":"*"}]}')
        key_id, secret = k["AccessKeyId"], k["SecretAccessKey"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key_id, aws_secret_access_key=secret)
    s3.create_bucket(Bucket=a.bucket)
    if a.upload:
        for d, _, files in os.walk(a.upload):
            for f in files:
                path = os.path.join(d, f)
                rel = os.path.relpath(path, a.upload).replace(os.sep, "/")
                key = f"{a.prefix.strip('/')}/{rel}" if a.prefix.strip("/") else rel
                s3.upload_file(path, a.bucket, key)
    print(f"READY {endpoint} {key_id} {secret}", flush=True)
    for line in sys.stdin:
        parts = line.split()
        try:
            if len(parts) == 3 and parts[0] == "put":
                s3.upload_file(parts[2], a.bucket, parts[1])
            elif len(parts) == 2 and parts[0] == "del":
                s3.delete_object(Bucket=a.bucket, Key=parts[1])
            else:
                print(f"ERR unknown command: {line.strip()}", flush=True)
                continue
            print("OK", flush=True)
        except Exception as e:  # report, keep serving
            print(f"ERR {e}".replace("\n", " "), flush=True)
    srv.stop()


if __name__ == "__main__":
    main()
