from enum import StrEnum

class Status(StrEnum):
    CANCELLED = "cancelled"
    FAILED = "failed"
    FILTERED = "filtered"
    PENDING = "pending"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
