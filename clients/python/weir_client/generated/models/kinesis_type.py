from enum import StrEnum

class KinesisType(StrEnum):
    KINESIS = "kinesis"

    def __str__(self) -> str:
        return str(self.value)
