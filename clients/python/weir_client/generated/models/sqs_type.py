from enum import StrEnum

class SqsType(StrEnum):
    SQS = "sqs"

    def __str__(self) -> str:
        return str(self.value)
