"""The hand-written API: ``POST /bench/items/`` saves an item and sends ``judge_one`` after commit."""

from rest_framework import generics, serializers
from rest_framework.authentication import TokenAuthentication
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated

from .models import Item
from .submitting import publish_one


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "payload", "status", "created_at"]
        read_only_fields = ["id", "status", "created_at"]

    def validate_payload(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("The payload must be a JSON object.")
        return value


class ItemCreateView(generics.CreateAPIView):
    """Submit one item; it is judged by a worker after the request."""

    serializer_class = ItemSerializer
    authentication_classes = [TokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    def perform_create(self, serializer):
        publish_one(serializer.save().pk)
