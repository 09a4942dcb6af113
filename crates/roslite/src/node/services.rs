//! The node's service API: servers and clients, typed and serialized.

use std::sync::Arc;

use roslite_executor::CallbackGroup;

use roslite_cdr::SharedBuf;

use crate::endpoints::introspection::{EventOutlet, EventPublisherFactory, Introspection};
use crate::endpoints::serialized::TypeInfo;
use crate::endpoints::serialized_service::{SerializedService, ServiceResponder};
use crate::endpoints::service::{
    services_default_qos, Client, SerializedClient, Service, ServiceHandler, ServiceReply,
};
use crate::vocabulary::qos::QosProfile;
use roslite_msgs::Service as ServiceType;

impl super::Node {
    /// A server of service `name` (relative names resolve in the node's namespace; ROS
    /// remapping applies) whose `callback` answers each request on the executor spinning this
    /// node. Keep the returned [`Service`] alive to keep serving.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name.
    pub fn create_service<S: ServiceType, F>(
        &self,
        name: &str,
        callback: F,
    ) -> Result<Service<S>, super::NodeError>
    where
        F: FnMut(S::Request) -> S::Response + Send + 'static,
    {
        let group = self.shared.host.default_group.clone();
        self.create_service_in(&group, name, services_default_qos(), callback)
    }

    /// As [`Self::create_service`], in a callback group and with a QoS profile of choice.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name or QoS profile.
    pub fn create_service_in<S: ServiceType, F>(
        &self,
        group: &Arc<CallbackGroup>,
        name: &str,
        qos: QosProfile,
        callback: F,
    ) -> Result<Service<S>, super::NodeError>
    where
        F: FnMut(S::Request) -> S::Response + Send + 'static,
    {
        qos.validate()?;
        let name = self.resolve_topic_name(name)?;
        let introspection = self.introspection(&name);
        Ok(Service::new(
            self.shared.host.clone(),
            group,
            name,
            qos,
            ServiceHandler::Immediate(Box::new(callback)),
            introspection,
        ))
    }

    /// A server of service `name` whose `callback` may answer after it returns: it gets each
    /// request with the [`ServiceReply`] that answers it, to send from any thread, at any time
    /// (rclcpp's deferred `send_response`). For a service whose work takes long, or waits on
    /// other services: the executor spinning this node stays free meanwhile.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name.
    pub fn create_deferred_service<S: ServiceType, F>(
        &self,
        name: &str,
        callback: F,
    ) -> Result<Service<S>, super::NodeError>
    where
        F: FnMut(S::Request, ServiceReply<S>) + Send + 'static,
    {
        let name = self.resolve_topic_name(name)?;
        let introspection = self.introspection(&name);
        Ok(Service::new(
            self.shared.host.clone(),
            &self.shared.host.default_group.clone(),
            name,
            services_default_qos(),
            ServiceHandler::Deferred(Box::new(callback)),
            introspection,
        ))
    }

    /// A server of service `name` whose type is known only at run time: `type_name`
    /// (`example_interfaces/srv/AddTwoInts`), its `request` and `response` types. `callback`
    /// gets each request's bytes (CDR with the encapsulation header) and the responder that
    /// answers it, on the executor spinning this node.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name or QoS profile.
    pub fn create_serialized_service(
        &self,
        name: &str,
        type_name: &str,
        types: (TypeInfo, TypeInfo),
        qos: QosProfile,
        callback: impl FnMut(&SharedBuf, ServiceResponder) + Send + 'static,
    ) -> Result<SerializedService, super::NodeError> {
        let group = self.shared.host.default_group.clone();
        self.create_serialized_service_in(&group, name, type_name, types, qos, callback)
    }

    /// As [`Self::create_serialized_service`], in a group from
    /// [`super::Node::create_callback_group`].
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name or QoS profile.
    pub fn create_serialized_service_in(
        &self,
        group: &Arc<CallbackGroup>,
        name: &str,
        type_name: &str,
        (request, response): (TypeInfo, TypeInfo),
        qos: QosProfile,
        callback: impl FnMut(&SharedBuf, ServiceResponder) + Send + 'static,
    ) -> Result<SerializedService, super::NodeError> {
        qos.validate()?;
        let name = self.resolve_topic_name(name)?;
        let introspection = self.introspection(&name);
        Ok(SerializedService::new(
            self.shared.host.clone(),
            group,
            name,
            (
                crate::endpoints::serialized::intern(type_name),
                request,
                response,
            ),
            qos,
            Box::new(callback),
            introspection,
        ))
    }

    /// A client of service `name`.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name.
    pub fn create_client<S: ServiceType>(&self, name: &str) -> Result<Client<S>, super::NodeError> {
        self.create_client_with_qos(name, services_default_qos())
    }

    /// A client for a service type known only at run time; `request` and `response` name the
    /// two message types (`std_srvs/srv/SetBool_Request`, `..._Response`).
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name.
    pub fn create_serialized_client(
        &self,
        name: &str,
        request: crate::endpoints::serialized::TypeInfo,
        response: crate::endpoints::serialized::TypeInfo,
    ) -> Result<SerializedClient, super::NodeError> {
        let name = self.resolve_topic_name(name)?;
        let introspection = self.introspection(&name);
        Ok(SerializedClient::new(
            self.shared.host.clone(),
            name,
            request,
            response,
            introspection,
        ))
    }

    /// As [`Self::create_client`] with a QoS profile of choice.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid service name or QoS profile.
    pub fn create_client_with_qos<S: ServiceType>(
        &self,
        name: &str,
        qos: QosProfile,
    ) -> Result<Client<S>, super::NodeError> {
        qos.validate()?;
        let name = self.resolve_topic_name(name)?;
        let introspection = self.introspection(&name);
        Ok(Client::new(
            self.shared.host.clone(),
            name,
            qos,
            introspection,
        ))
    }

    /// Introspection, off, for a server or client of `service` (fully qualified), and the
    /// maker of its events' publisher: a publisher of this node, with events stamped by the
    /// node's ROS clock.
    pub(crate) fn introspection<O: EventOutlet + ?Sized>(
        &self,
        service: &str,
    ) -> (Introspection<O>, EventPublisherFactory) {
        let node = self.shared.clone();
        (
            Introspection::new(service, self.shared.ros_clock.clone()),
            Box::new(move |topic, qos, ty| node.serialized_publisher(topic, qos, ty)),
        )
    }
}
