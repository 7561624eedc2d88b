"""The AWS adapter (boto3). Import :mod:`gpuplan.providers.aws.provider` lazily: boto3
loads there, never when the CLI starts."""
