from enum import StrEnum

class SnsType(StrEnum):
    SNS = "sns"

    def __str__(self) -> str:
        return str(self.value)
